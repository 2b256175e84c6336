package archive

import (
	"archive/tar"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

func (x *extractor) writeFile(pfd int, base, name string, mode uint32, hdr *tar.Header, r io.Reader) error {
	fd, err := unix.Openat(pfd, base, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("creating %s: %w", name, err)
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	if _, err := io.CopyBuffer(f, r, x.copyBuf); err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	if x.asRoot {
		if err := f.Chown(hdr.Uid, hdr.Gid); err != nil {
			return fmt.Errorf("chown %s: %w", name, err)
		}
	}
	if err := unix.Fchmod(fd, mode); err != nil {
		return fmt.Errorf("chmod %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("closing %s: %w", name, err)
	}
	return setTimes(pfd, base, hdr.ModTime)
}

// finishNode sets owner, (optionally) mode and mtime of a non-regular node
// without following it.
func (x *extractor) finishNode(pfd int, base string, hdr *tar.Header, chmod bool) error {
	if err := x.chown(pfd, base, hdr); err != nil {
		return err
	}
	if chmod {
		if err := unix.Fchmodat(pfd, base, uint32(hdr.Mode)&0o7777, 0); err != nil {
			return fmt.Errorf("chmod %s: %w", base, err)
		}
	}
	return setTimes(pfd, base, hdr.ModTime)
}

func (x *extractor) chown(pfd int, base string, hdr *tar.Header) error {
	if !x.asRoot {
		return nil
	}
	if err := unix.Fchownat(pfd, base, hdr.Uid, hdr.Gid, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return fmt.Errorf("chown %s: %w", base, err)
	}
	return nil
}

func setTimes(dfd int, name string, mtime time.Time) error {
	ts := []unix.Timespec{{Nsec: unix.UTIME_OMIT}, unix.NsecToTimespec(mtime.UnixNano())}
	if err := unix.UtimesNanoAt(dfd, name, ts, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return fmt.Errorf("setting mtime of %s: %w", name, err)
	}
	return nil
}

func (x *extractor) addDir(name string) {
	if _, ok := x.dirIdx[name]; ok {
		return
	}
	x.dirIdx[name] = len(x.dirs)
	x.dirs = append(x.dirs, dirMeta{name: name, mode: 0o755})
}

func (x *extractor) setDirMeta(name string, hdr *tar.Header) {
	d := &x.dirs[x.dirIdx[name]]
	d.mode = uint32(hdr.Mode) & 0o7777
	d.mtime = hdr.ModTime
	d.uid, d.gid = hdr.Uid, hdr.Gid
	d.set = true
}

func depth(name string) int {
	if name == "." {
		return -1
	}
	return strings.Count(name, "/")
}

// setXattrs applies recorded overlayfs xattrs to a file or directory.
func (x *extractor) setXattrs(name string, hdr *tar.Header) error {
	var keys []string
	for k := range hdr.PAXRecords {
		if strings.HasPrefix(k, paxXattrPrefix) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	f, err := x.root.OpenFile(name, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return fmt.Errorf("opening %s for xattrs: %w", name, err)
	}
	defer f.Close()
	sort.Strings(keys)
	for _, k := range keys {
		attr := strings.TrimPrefix(k, paxXattrPrefix)
		allowed := false
		for _, p := range recordedXattrPrefixes {
			allowed = allowed || strings.HasPrefix(attr, p)
		}
		if !allowed {
			continue
		}
		if err := unix.Fsetxattr(int(f.Fd()), attr, []byte(hdr.PAXRecords[k]), 0); err != nil {
			return fmt.Errorf("setting xattr %s on %s: %w", attr, name, err)
		}
	}
	return nil
}

// finish applies directory modes, owners and mtimes, deepest first.
func (x *extractor) finish() error {
	sort.SliceStable(x.dirs, func(i, j int) bool { return depth(x.dirs[i].name) > depth(x.dirs[j].name) })
	rd, err := x.root.OpenFile(".", os.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return fmt.Errorf("opening destination: %w", err)
	}
	defer rd.Close()
	rfd := int(rd.Fd())
	for _, d := range x.dirs {
		if d.set && x.asRoot {
			if err := unix.Fchownat(rfd, d.name, d.uid, d.gid, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				return fmt.Errorf("chown %s: %w", d.name, err)
			}
		}
		if err := unix.Fchmodat(rfd, d.name, d.mode, 0); err != nil {
			return fmt.Errorf("chmod %s: %w", d.name, err)
		}
		if d.set {
			if err := setTimes(rfd, d.name, d.mtime); err != nil {
				return err
			}
		}
	}
	return nil
}
