package archive

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// PAX record keys used for overlayfs markers.
const (
	paxWhiteout    = "TENON.whiteout"
	paxXattrPrefix = "SCHILY.xattr."
)

// recordedXattrPrefixes are the extended-attribute name prefixes Capture
// keeps: the overlayfs markers (opaque directories, redirects).
var recordedXattrPrefixes = []string{"trusted.overlay.", "user.overlay."}

// CaptureOptions tune Capture.
type CaptureOptions struct {
	// Level is the gzip level; 0 means gzip.BestSpeed.
	Level int
	// WrapFile, when set, wraps the writer of the temporary blob file. It
	// exists for fault injection (a writer failing with ENOSPC).
	WrapFile func(io.Writer) io.Writer
}

// Capture archives srcDir into blobDir with default options.
func Capture(ctx context.Context, srcDir, blobDir string) (Ref, error) {
	return CaptureWith(ctx, srcDir, blobDir, CaptureOptions{})
}

// CaptureWith archives srcDir into a content-addressed blob in blobDir.
// On error no blob and no temporary file are left behind.
func CaptureWith(ctx context.Context, srcDir, blobDir string, opt CaptureOptions) (ref Ref, err error) {
	if opt.Level == 0 {
		opt.Level = gzip.BestSpeed
	}
	if err := os.MkdirAll(blobDir, 0o700); err != nil {
		return Ref{}, fmt.Errorf("creating blob dir: %w", err)
	}
	tmp, err := os.CreateTemp(blobDir, ".capture-*")
	if err != nil {
		return Ref{}, fmt.Errorf("creating temporary blob: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	var fw io.Writer = &writebackWriter{f: tmp}
	if opt.WrapFile != nil {
		fw = opt.WrapFile(fw)
	}
	h := sha256.New()
	cw := &countWriter{w: io.MultiWriter(fw, h)}
	bw := bufio.NewWriterSize(cw, 1<<20)
	zw := newParallelGzip(bw, opt.Level)
	tw := tar.NewWriter(zw)
	ref, err = writeTree(ctx, tw, srcDir)
	if cerr := tw.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("closing tar stream: %w", cerr)
	}
	if cerr := zw.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("compressing: %w", cerr)
	}
	if err != nil {
		return Ref{}, err
	}
	if err := bw.Flush(); err != nil {
		return Ref{}, fmt.Errorf("writing blob: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		return Ref{}, fmt.Errorf("syncing blob: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return Ref{}, fmt.Errorf("closing blob: %w", err)
	}
	ref.Digest = DigestPrefix + hex.EncodeToString(h.Sum(nil))
	ref.Size = cw.n
	ref.Written = cw.n
	final, _ := BlobPath(blobDir, ref.Digest)
	if err := os.Rename(tmp.Name(), final); err != nil {
		return Ref{}, fmt.Errorf("publishing blob: %w", err)
	}
	if err := syncDir(blobDir); err != nil {
		return Ref{}, err
	}
	return ref, nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("opening blob dir: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("syncing blob dir: %w", err)
	}
	return nil
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

type inode struct{ dev, ino uint64 }

// writeTree walks srcDir in lexical order and writes one entry per node.
func writeTree(ctx context.Context, tw *tar.Writer, srcDir string) (Ref, error) {
	var ref Ref
	links := map[inode]string{}
	buf := make([]byte, 1<<20)
	err := filepath.WalkDir(srcDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("walking %s: %w", path, err)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, err := filepath.Rel(srcDir, path)
		if err != nil {
			return err
		}
		fi, err := os.Lstat(path)
		if err != nil {
			return fmt.Errorf("stat %s: %w", path, err)
		}
		st, _ := fi.Sys().(*syscall.Stat_t)
		hdr := &tar.Header{
			Name:    filepath.ToSlash(rel),
			Mode:    tarMode(fi.Mode()),
			ModTime: fi.ModTime(),
			Format:  tar.FormatPAX,
		}
		if st != nil {
			hdr.Uid, hdr.Gid = int(st.Uid), int(st.Gid)
		}
		mode := fi.Mode()
		switch {
		case mode.IsDir():
			hdr.Typeflag = tar.TypeDir
			if rel == "." {
				hdr.Name = "./"
			} else {
				hdr.Name += "/"
			}
		case mode.IsRegular():
			if st != nil && st.Nlink > 1 {
				key := inode{uint64(st.Dev), st.Ino}
				if first, ok := links[key]; ok {
					hdr.Typeflag, hdr.Linkname = tar.TypeLink, first
					break
				}
				links[key] = hdr.Name
			}
			hdr.Typeflag, hdr.Size = tar.TypeReg, fi.Size()
		case mode&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return fmt.Errorf("reading link %s: %w", path, err)
			}
			hdr.Typeflag, hdr.Linkname = tar.TypeSymlink, target
		case mode&fs.ModeNamedPipe != 0:
			hdr.Typeflag = tar.TypeFifo
		case mode&fs.ModeSocket != 0:
			return nil
		case mode&fs.ModeCharDevice != 0 && st != nil && st.Rdev == 0:
			hdr.Typeflag = tar.TypeReg
			hdr.Mode = 0
			hdr.PAXRecords = map[string]string{paxWhiteout: "1"}
		default:
			return fmt.Errorf("%w: %s (%s)", ErrUnsupported, path, mode.Type())
		}
		if err := addXattrs(path, hdr); err != nil {
			return err
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return fmt.Errorf("writing header %s: %w", hdr.Name, err)
		}
		ref.Files++
		if hdr.Typeflag == tar.TypeReg && hdr.Size > 0 {
			f, err := os.Open(path)
			if err != nil {
				return fmt.Errorf("opening %s: %w", path, err)
			}
			n, err := io.CopyBuffer(tw, io.LimitReader(f, hdr.Size), buf)
			f.Close()
			if err != nil {
				return fmt.Errorf("archiving %s: %w", path, err)
			}
			if n != hdr.Size {
				return fmt.Errorf("archiving %s: file shrank from %d to %d bytes while capturing", path, hdr.Size, n)
			}
			ref.Bytes += n
		}
		return nil
	})
	return ref, err
}

// tarMode converts a FileMode's permission and special bits to tar's c_ISUID etc.
func tarMode(m fs.FileMode) int64 {
	v := int64(m.Perm())
	if m&fs.ModeSetuid != 0 {
		v |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		v |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		v |= 0o1000
	}
	return v
}

// addXattrs records the overlayfs extended attributes of path.
func addXattrs(path string, hdr *tar.Header) error {
	x, err := xattrsOf(path)
	if err != nil || len(x) == 0 {
		return err
	}
	if hdr.PAXRecords == nil {
		hdr.PAXRecords = map[string]string{}
	}
	for name, val := range x {
		hdr.PAXRecords[paxXattrPrefix+name] = val
	}
	return nil
}

// xattrsOf returns the overlayfs extended attributes of path (nil if none).
func xattrsOf(path string) (map[string]string, error) {
	names, err := listXattrs(path)
	if err != nil || len(names) == 0 {
		return nil, err
	}
	var out map[string]string
	for _, name := range names {
		keep := false
		for _, p := range recordedXattrPrefixes {
			keep = keep || strings.HasPrefix(name, p)
		}
		if !keep {
			continue
		}
		val := make([]byte, 256)
		n, err := unix.Lgetxattr(path, name, val)
		if errors.Is(err, unix.ERANGE) {
			if n, err = unix.Lgetxattr(path, name, nil); err == nil {
				val = make([]byte, n)
				n, err = unix.Lgetxattr(path, name, val)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("reading xattr %s of %s: %w", name, path, err)
		}
		if out == nil {
			out = map[string]string{}
		}
		out[name] = string(val[:n])
	}
	return out, nil
}

func listXattrs(path string) ([]string, error) {
	buf := make([]byte, 1024)
	n, err := unix.Llistxattr(path, buf)
	if errors.Is(err, unix.ERANGE) {
		if n, err = unix.Llistxattr(path, nil); err == nil {
			buf = make([]byte, n)
			n, err = unix.Llistxattr(path, buf)
		}
	}
	if errors.Is(err, unix.ENOTSUP) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing xattrs of %s: %w", path, err)
	}
	var names []string
	for _, s := range strings.Split(string(buf[:n]), "\x00") {
		if s != "" {
			names = append(names, s)
		}
	}
	return names, nil
}

// writebackStep is how many bytes are written before writeback of them is
// started, so the final fsync finds little left to flush.
const writebackStep = 8 << 20

// writebackWriter writes to f and starts asynchronous writeback
// (sync_file_range SYNC_FILE_RANGE_WRITE) of every completed step.
type writebackWriter struct {
	f       *os.File
	off     int64 // bytes written
	flushed int64 // writeback started up to here
}

func (w *writebackWriter) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	w.off += int64(n)
	if w.off-w.flushed >= writebackStep {
		// Best effort: fsync at the end is what guarantees durability.
		_ = unix.SyncFileRange(int(w.f.Fd()), w.flushed, w.off-w.flushed, unix.SYNC_FILE_RANGE_WRITE)
		w.flushed = w.off
	}
	return n, err
}
