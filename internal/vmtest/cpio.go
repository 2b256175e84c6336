package vmtest

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
)

// archive is the content of an initramfs: a tree of directories, regular
// files (from the host or from memory) and symlinks, written in the newc
// cpio format the kernel unpacks into its root file system.
type archive struct {
	entries map[string]*entry // keyed by clean relative path ("usr/bin/sh")
}

type entry struct {
	mode   fs.FileMode // type bits and permissions
	src    string      // host file for a regular file, "" with data
	data   []byte      // content of a regular file made in memory
	target string      // a symlink's target
	rdev   [2]uint32   // a device's major and minor
}

func newArchive() *archive { return &archive{entries: make(map[string]*entry)} }

// clean turns "/usr/bin/x" or "usr/bin/x" into "usr/bin/x".
func clean(p string) string { return strings.TrimPrefix(path.Clean("/"+p), "/") }

// add records e at p, with its parent directories, and fails when p is
// already something else.
func (a *archive) add(p string, e *entry) error {
	p = clean(p)
	if p == "" {
		return fmt.Errorf("vmtest: initramfs: empty path")
	}
	if dir := path.Dir(p); dir != "." {
		if err := a.add(dir, &entry{mode: fs.ModeDir | 0o755}); err != nil {
			return err
		}
	}
	if old, ok := a.entries[p]; ok {
		if old.mode.IsDir() && e.mode.IsDir() {
			return nil
		}
		if old.mode == e.mode && old.src == e.src && old.target == e.target && old.rdev == e.rdev && bytes.Equal(old.data, e.data) {
			return nil
		}
		return fmt.Errorf("vmtest: initramfs: %s added twice, differently", p)
	}
	a.entries[p] = e
	return nil
}

func (a *archive) dir(p string, perm fs.FileMode) error {
	return a.add(p, &entry{mode: fs.ModeDir | perm})
}

func (a *archive) symlink(p, target string) error {
	return a.add(p, &entry{mode: fs.ModeSymlink | 0o777, target: target})
}

func (a *archive) chardev(p string, perm fs.FileMode, major, minor uint32) error {
	return a.add(p, &entry{mode: fs.ModeDevice | fs.ModeCharDevice | perm, rdev: [2]uint32{major, minor}})
}

func (a *archive) bytes(p string, perm fs.FileMode, data []byte) error {
	return a.add(p, &entry{mode: perm, data: data})
}

func (a *archive) file(p string, perm fs.FileMode, src string) error {
	return a.add(p, &entry{mode: perm, src: src})
}

// write writes the archive in newc format, parents before children.
func (a *archive) write(w io.Writer) error {
	names := make([]string, 0, len(a.entries))
	for n := range a.entries {
		names = append(names, n)
	}
	slices.Sort(names) // "usr" < "usr/bin": a parent sorts before its children
	cw := &cpioWriter{w: w}
	for _, n := range names {
		e := a.entries[n]
		switch {
		case e.mode.IsDir():
			cw.header(n, 0o040000|uint32(e.mode.Perm()), 2, 0)
		case e.mode&fs.ModeCharDevice != 0:
			cw.rdev = e.rdev
			cw.header(n, 0o020000|uint32(e.mode.Perm()), 1, 0)
			cw.rdev = [2]uint32{}
		case e.mode&fs.ModeSymlink != 0:
			cw.header(n, 0o120000|0o777, 1, len(e.target))
			cw.body(strings.NewReader(e.target), len(e.target))
		case e.src != "":
			f, err := os.Open(e.src)
			if err != nil {
				return fmt.Errorf("vmtest: initramfs: %w", err)
			}
			st, err := f.Stat()
			if err == nil && !st.Mode().IsRegular() {
				err = fmt.Errorf("%s is not a regular file", e.src)
			}
			if err != nil {
				f.Close()
				return fmt.Errorf("vmtest: initramfs: %w", err)
			}
			cw.header(n, 0o100000|uint32(e.mode.Perm()), 1, int(st.Size()))
			cw.body(f, int(st.Size()))
			f.Close()
		default:
			cw.header(n, 0o100000|uint32(e.mode.Perm()), 1, len(e.data))
			cw.body(bytes.NewReader(e.data), len(e.data))
		}
	}
	cw.header("TRAILER!!!", 0, 1, 0)
	return cw.err
}

// cpioWriter writes newc records; the first error sticks.
type cpioWriter struct {
	w    io.Writer
	ino  uint32
	n    int64     // bytes written, for padding
	rdev [2]uint32 // the next header's device numbers
	err  error
}

func (c *cpioWriter) raw(b []byte) {
	if c.err != nil {
		return
	}
	var n int
	n, c.err = c.w.Write(b)
	c.n += int64(n)
}

func (c *cpioWriter) pad() {
	if r := c.n % 4; r != 0 {
		c.raw(make([]byte, 4-r))
	}
}

func (c *cpioWriter) header(name string, mode, nlink uint32, size int) {
	c.ino++
	h := fmt.Sprintf("070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		c.ino, mode, 0, 0, nlink, 0, size, 0, 0, c.rdev[0], c.rdev[1], len(name)+1, 0)
	c.raw([]byte(h))
	c.raw(append([]byte(name), 0))
	c.pad()
}

func (c *cpioWriter) body(r io.Reader, size int) {
	if c.err != nil {
		return
	}
	n, err := io.Copy(c.w, r)
	c.n += n
	if err == nil && n != int64(size) {
		err = fmt.Errorf("vmtest: initramfs: wrote %d bytes, want %d (file changed?)", n, size)
	}
	c.err = err
	c.pad()
}
