package cgroup

import (
	"os"
	"syscall"
)

// Hot control files. The gate loop reads a few files of every sandbox each
// period (20 ms in a replay compressed twelvefold, 100 ms at the agents'
// own time): its charge, CPU time and freezer state, and the domain's
// room. Opening a file for each read costs an open, a read to the end and
// a close (readControl); a group keeps these files open instead and reads
// them with one pread from offset 0, which makes a cgroup (seq_file) file
// generate its content afresh (preadAll). A file that fails to read
// through its open descriptor (the group was removed: ENODEV) is closed and
// read once more by path, so the caller sees the error a fresh read gives
// (ErrNotExist for a removed group). Delete closes them; an *os.File's
// finalizer closes those of a group dropped without Delete.

// readHot reads path through the group's open descriptor, opening it on
// first use.
func (g *group) readHot(path string) ([]byte, error) {
	g.hotMu.Lock()
	f := g.files[path]
	if f == nil {
		nf, err := os.Open(path)
		if err != nil {
			g.hotMu.Unlock()
			return nil, err
		}
		if g.files == nil {
			g.files = make(map[string]*os.File)
		}
		g.files[path], f = nf, nf
	}
	g.hotMu.Unlock()
	b, err := preadAll(f)
	if err == nil {
		return b, nil
	}
	g.hotMu.Lock()
	if g.files[path] == f {
		delete(g.files, path)
	}
	g.hotMu.Unlock()
	f.Close()
	return readControl(path)
}

// preadAll reads f whole from offset 0 with one pread where the content
// fits the buffer: a seq_file read at offset 0 returns all of it that fits
// (os.File.ReadAt would read on to an empty pread at the end).
func preadAll(f *os.File) ([]byte, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	b := make([]byte, 512)
	for {
		var n int
		var rerr error
		if err := rc.Read(func(fd uintptr) bool {
			for {
				n, rerr = syscall.Pread(int(fd), b, 0)
				if rerr != syscall.EINTR {
					return true
				}
			}
		}); err != nil {
			return nil, err
		}
		if rerr != nil {
			return nil, &os.PathError{Op: "read", Path: f.Name(), Err: rerr}
		}
		if n < len(b) {
			return b[:n], nil
		}
		b = make([]byte, 2*len(b))
	}
}

// closeHot closes the group's open control files.
func (g *group) closeHot() {
	g.hotMu.Lock()
	defer g.hotMu.Unlock()
	for p, f := range g.files {
		f.Close()
		delete(g.files, p)
	}
}

// hot is the group's reader through the files it keeps open.
func (g *group) hot() reader { return g.readHot }
