package archive

import (
	"archive/tar"
	"context"
	"io"
	"path"
	"strings"
)

// OCI whiteout names (image-spec, layer.md): ".wh.<name>" deletes <name> of
// the layers below; ".wh..wh..opq" in a directory hides everything the
// layers below hold in it.
const (
	whiteoutPrefix = ".wh."
	whiteoutOpaque = ".wh..wh..opq"
)

// LayerOptions are the choices of ExtractLayer that loosen its checks.
type LayerOptions struct {
	// KeepSetuid keeps the setuid and setgid bits of files. Without it they
	// are dropped (and counted in LayerStats.SetuidDropped); directories
	// keep their setgid bit either way (it only picks new files' group).
	KeepSetuid bool
	// SkipDevices skips character and block device nodes (counted in
	// LayerStats.DevicesSkipped) instead of failing on the first one.
	SkipDevices bool
	// Plain extracts a plain tar (an OCI layout in a tar file): ".wh."
	// names are ordinary files and no overlay marker is made, and symbolic
	// links are refused: the layout is read on the host, as root, by a
	// reader that follows them (index.json -> /dev/zero, blobs -> /).
	Plain bool
}

// LayerStats says what ExtractLayer wrote and what it left out.
type LayerStats struct {
	Entries        int   // tar entries read
	Bytes          int64 // bytes of regular-file content written
	Whiteouts      int   // ".wh.<name>" entries made into overlay whiteouts
	Opaque         int   // directories marked opaque
	SetuidDropped  int   // files whose setuid/setgid bits were dropped
	DevicesSkipped int   // device nodes skipped (LayerOptions.SkipDevices)
}

// ExtractLayer extracts an uncompressed image layer tar (r) into dstDir,
// which must be missing or empty, as an overlayfs lower directory: an OCI
// whiteout ".wh.<name>" becomes a 0/0 character device <name> (overlay's
// whiteout) and ".wh..wh..opq" sets "trusted.overlay.opaque" = "y" on its
// directory. It applies the checks of every extraction in this package
// (no absolute names, no "..", no symlink whose relative target climbs out,
// no path through a symlink, no hard link to anything but a regular file of
// the same layer, no device node) and, unless opts says otherwise, drops
// setuid and setgid bits. Extended attributes and tenon's own PAX records
// in the layer are ignored: only the markers above are made. Writing
// needs root (owners, whiteout devices, trusted xattrs).
//
// ExtractLayer reads r only up to the tar's end-of-archive marker; a caller
// checking a digest over the whole stream drains the rest. On error dstDir
// holds a partial tree: extract into a temporary directory and rename it
// into place on success.
func ExtractLayer(ctx context.Context, r io.Reader, dstDir string, opts LayerOptions) (LayerStats, error) {
	var st LayerStats
	err := extractEntries(ctx, tar.NewReader(r), dstDir, "layer", func(x *extractor, hdr *tar.Header, tr *tar.Reader) error {
		st.Entries++
		// The layer's own xattrs and PAX records never reach the disk: a
		// layer could otherwise plant overlay redirects or whiteouts of
		// tenon's capture format.
		hdr.PAXRecords = nil
		if hdr.Typeflag == tar.TypeChar || hdr.Typeflag == tar.TypeBlock {
			if opts.SkipDevices {
				st.DevicesSkipped++
				return nil
			}
			return unsafeEntry(hdr.Name, "device node (import with device nodes skipped to leave them out)")
		}
		if !opts.KeepSetuid && hdr.Typeflag != tar.TypeDir && hdr.Mode&0o6000 != 0 {
			hdr.Mode &^= 0o6000
			st.SetuidDropped++
		}
		if !opts.Plain {
			handled, err := x.whiteout(hdr, &st)
			if err != nil || handled {
				return err
			}
		} else if hdr.Typeflag == tar.TypeSymlink {
			return unsafeEntry(hdr.Name, "symbolic link in an OCI layout (its files are read on the host)")
		}
		if err := x.entry(hdr, tr); err != nil {
			return err
		}
		if hdr.Typeflag == tar.TypeReg || hdr.Typeflag == tar.TypeRegA {
			st.Bytes += hdr.Size
		}
		return nil
	})
	return st, err
}

// whiteout makes an OCI whiteout entry into its overlay marker and reports
// whether hdr was one.
func (x *extractor) whiteout(hdr *tar.Header, st *LayerStats) (bool, error) {
	name, err := cleanName(hdr.Name)
	if err != nil {
		return false, err
	}
	base := path.Base(name)
	if !strings.HasPrefix(base, whiteoutPrefix) {
		return false, nil
	}
	dir := path.Dir(name)
	if base == whiteoutOpaque {
		if k, ok := x.kinds[dir]; ok && k != kindDir {
			return true, unsafeEntry(hdr.Name, "opaque marker in a non-directory")
		}
		if dir != "." {
			// Creates the directory (and its parents) when the layer did
			// not list it; its mode then defaults to 0755.
			if _, err := x.parent(path.Join(dir, whiteoutOpaque)); err != nil {
				return true, err
			}
		}
		opq := &tar.Header{PAXRecords: map[string]string{paxXattrPrefix + "trusted.overlay.opaque": "y"}}
		if err := x.setXattrs(dir, opq); err != nil {
			return true, err
		}
		st.Opaque++
		return true, nil
	}
	target := strings.TrimPrefix(base, whiteoutPrefix)
	if target == "" || target == "." || target == ".." || strings.HasPrefix(target, whiteoutPrefix) {
		return true, unsafeEntry(hdr.Name, "malformed whiteout")
	}
	wh := &tar.Header{
		Typeflag:   tar.TypeReg,
		Name:       path.Join(dir, target),
		Mode:       0o600,
		Uid:        hdr.Uid,
		Gid:        hdr.Gid,
		ModTime:    hdr.ModTime,
		PAXRecords: map[string]string{paxWhiteout: "1"},
	}
	if err := x.entry(wh, nil); err != nil {
		return true, err
	}
	st.Whiteouts++
	return true, nil
}
