package cgroup

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"syscall"
)

// walkGroups calls fn with dir and then with each of its descendant
// directories, parents before their children. A directory removed while
// walking (or a dir that does not exist) is skipped. The gate lists every
// sandbox's tasks each period (MemoryPids), so the listing takes the
// fewest system calls: open, getdents until it returns nothing, close; no
// stat, no sorting (filepath.WalkDir also fstats each directory it opens
// and reads every entry into a sorted list).
func walkGroups(dir string, fn func(dir string) error) error {
	subs, err := subdirNames(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENODEV) {
			return nil // removed while walking
		}
		return err
	}
	if err := fn(dir); err != nil {
		return err
	}
	for _, s := range subs {
		if err := walkGroups(filepath.Join(dir, s), fn); err != nil {
			return err
		}
	}
	return nil
}

// subdirNames returns the names of dir's subdirectories, in directory
// order. getdents is called until it returns nothing: a shorter batch is
// not the end, since the kernel ends a batch early when a signal is
// pending (and Go's preemption signals one).
func subdirNames(dir string) ([]string, error) {
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	defer syscall.Close(fd)
	var names []string
	var buf [8192]byte
	for {
		n, err := syscall.Getdents(fd, buf[:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "getdents", Path: dir, Err: err}
		}
		if n <= 0 {
			return names, nil
		}
		for b := buf[:n]; len(b) >= nameOff; {
			// struct linux_dirent64: ino u64, off s64, reclen u16, type u8, name.
			reclen := int(binary.NativeEndian.Uint16(b[16:18]))
			if reclen < nameOff || reclen > len(b) {
				break
			}
			typ, name := b[18], b[nameOff:reclen]
			b = b[reclen:]
			if typ != syscall.DT_DIR && typ != syscall.DT_UNKNOWN {
				continue // most of a group's entries are its control files
			}
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			if s := string(name); s != "." && s != ".." && (typ == syscall.DT_DIR || isDir(filepath.Join(dir, s))) {
				names = append(names, s)
			}
		}
	}
}

// nameOff is the offset of a linux_dirent64's name.
const nameOff = 19

// isDir reports whether p is a directory (not following a symlink).
func isDir(p string) bool {
	var st syscall.Stat_t
	return syscall.Lstat(p, &st) == nil && st.Mode&syscall.S_IFMT == syscall.S_IFDIR
}
