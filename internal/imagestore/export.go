package imagestore

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"golang.org/x/sys/unix"
)

// WriteDockerArchive writes the image ref names as a `docker save` archive
// tagged tag, for `docker load` (the docker backend loads imported images
// it lacks this way). The layers are made again from their unpacked
// directories (overlay whiteouts and opaque markers back to OCI ones), so
// their digests, and the image id the engine computes, differ from the
// original's; the files, modes, owners and config do not.
func (s *Store) WriteDockerArchive(ref, tag string, w io.Writer) error {
	im, err := s.Get(ref)
	if err != nil {
		return err
	}
	t, err := name.NewTag(tag)
	if err != nil {
		return fmt.Errorf("imagestore: %w", err)
	}
	var layers []v1.Layer
	for _, l := range im.Layers {
		dir := s.LayerDir(l.DiffID)
		layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return dirTar(dir), nil })
		if err != nil {
			return fmt.Errorf("imagestore: layer %s: %w", l.DiffID, err)
		}
		layers = append(layers, layer)
	}
	img, err := mutate.AppendLayers(empty.Image, layers...)
	if err != nil {
		return fmt.Errorf("imagestore: %w", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return fmt.Errorf("imagestore: %w", err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = im.OS, im.Architecture
	cf.Config = v1.Config{Env: im.Config.Env, WorkingDir: im.Config.WorkingDir, User: im.Config.User,
		Entrypoint: im.Config.Entrypoint, Cmd: im.Config.Cmd}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return fmt.Errorf("imagestore: %w", err)
	}
	if err := tarball.Write(t, img, w); err != nil {
		return fmt.Errorf("imagestore: writing %s as a docker archive: %w", ref, err)
	}
	return nil
}

// dirTar streams an unpacked layer directory as a layer tar, in lexical
// order (the same bytes every time: go-containerregistry reads a layer
// more than once).
func dirTar(dir string) io.ReadCloser {
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(writeDirTar(dir, pw)) }()
	return pr
}

func writeDirTar(dir string, w io.Writer) error {
	tw := tar.NewWriter(w)
	links := map[[2]uint64]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == "." {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		st, _ := fi.Sys().(*syscall.Stat_t)
		if fi.Mode()&fs.ModeCharDevice != 0 && st != nil && st.Rdev == 0 {
			// An overlay whiteout: the OCI one.
			return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: filepath.Join(filepath.Dir(rel), ".wh."+filepath.Base(rel)),
				Mode: 0o600, ModTime: fi.ModTime(), Format: tar.FormatPAX})
		}
		target := ""
		if fi.Mode()&fs.ModeSymlink != 0 {
			if target, err = os.Readlink(p); err != nil {
				return err
			}
		}
		h, err := tar.FileInfoHeader(fi, target)
		if err != nil {
			return err
		}
		h.Name, h.Uname, h.Gname, h.Format = rel, "", "", tar.FormatPAX
		h.AccessTime, h.ChangeTime = fi.ModTime(), fi.ModTime()
		if st != nil {
			h.Uid, h.Gid = int(st.Uid), int(st.Gid)
			if fi.Mode().IsRegular() && st.Nlink > 1 {
				key := [2]uint64{st.Dev, st.Ino}
				if first, ok := links[key]; ok {
					h.Typeflag, h.Linkname, h.Size = tar.TypeLink, first, 0
				} else {
					links[key] = rel
				}
			}
		}
		if fi.IsDir() {
			h.Name += "/"
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if fi.IsDir() && opaque(p) {
			return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: filepath.Join(rel, ".wh..wh..opq"),
				Mode: 0o600, ModTime: fi.ModTime(), Format: tar.FormatPAX})
		}
		if h.Typeflag == tar.TypeReg && h.Size > 0 {
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			_, err = io.Copy(tw, f)
			f.Close()
			return err
		}
		return nil
	})
	if err != nil {
		return err
	}
	return tw.Close()
}

// opaque reports whether an unpacked directory is marked opaque.
func opaque(p string) bool {
	buf := make([]byte, 8)
	n, err := unix.Lgetxattr(p, "trusted.overlay.opaque", buf)
	return err == nil && bytes.Equal(buf[:n], []byte("y"))
}
