package archive

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// PAX record keys used for overlayfs markers.
const (
	paxWhiteout    = "TENON.whiteout"
	paxXattrPrefix = "SCHILY.xattr."
)

// recordedXattrPrefixes are the extended-attribute name prefixes a capture
// keeps: the overlayfs markers (opaque directories, redirects).
var recordedXattrPrefixes = []string{"trusted.overlay.", "user.overlay."}

// CaptureOptions are the capture settings a caller keeps in its
// configuration (internal/residency) and hands to CaptureTree.
type CaptureOptions struct {
	// WrapFile, when set, wraps the writer of every blob file written. It
	// exists for fault injection (a writer failing with ENOSPC).
	WrapFile func(io.Writer) io.Writer
}

// syncDir fsyncs a directory so a rename into it survives a crash.
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

// countWriter counts the bytes written through it.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// inode identifies a file across hard links.
type inode struct{ dev, ino uint64 }

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
