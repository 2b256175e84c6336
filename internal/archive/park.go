package archive

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"

	"golang.org/x/sys/unix"
)

// parkName is the flat name under which a parked file is kept.
func parkName(rel string) string {
	sum := sha256.Sum256([]byte(rel))
	return hex.EncodeToString(sum[:20])
}

// Park hard-links every regular file of srcDir that cache describes (the
// cache of the capture just taken: same inode, size and times) into the new
// flat directory parkDir, so that a later ExtractTreeWith (Reuse: parkDir)
// can take the files over instead of creating and filling new ones. It
// walks srcDir through directory descriptors without following symlinks
// and links the very inode it checked (linkat AT_EMPTY_PATH, which needs
// CAP_DAC_READ_SEARCH). Call it after the capture is committed and before
// srcDir is deleted; it returns how many files it parked. On error parkDir
// may hold some links; RemoveAll it.
func Park(srcDir, parkDir string, cache *StatCache) (int, error) {
	if cache.Len() == 0 {
		return 0, nil
	}
	if err := os.MkdirAll(parkDir, 0o700); err != nil {
		return 0, fmt.Errorf("creating park dir: %w", err)
	}
	pd, err := unix.Open(parkDir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, fmt.Errorf("opening park dir: %w", err)
	}
	defer unix.Close(pd)
	root, err := unix.Open(srcDir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, fmt.Errorf("opening %s: %w", srcDir, err)
	}
	p := &parker{cache: cache, pd: pd}
	err = p.dir(root, ".") // closes root
	return p.n, err
}

type parker struct {
	cache *StatCache
	pd    int
	n     int
}

// dir parks the files under the directory fd (named rel), then closes fd.
func (p *parker) dir(fd int, rel string) error {
	f := os.NewFile(uintptr(fd), rel)
	defer f.Close()
	ents, err := f.ReadDir(-1)
	if err != nil {
		return fmt.Errorf("reading %s: %w", rel, err)
	}
	for _, e := range ents {
		name := path.Join(rel, e.Name())
		switch {
		case e.IsDir():
			cfd, err := unix.Openat(fd, e.Name(), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err != nil {
				return fmt.Errorf("opening %s: %w", name, err)
			}
			if err := p.dir(cfd, name); err != nil {
				return err
			}
		case e.Type().IsRegular():
			if err := p.file(fd, e.Name(), name); err != nil {
				return err
			}
		}
	}
	return nil
}

func (p *parker) file(dfd int, base, rel string) error {
	fd, err := unix.Openat(dfd, base, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("opening %s: %w", rel, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("stat %s: %w", rel, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil
	}
	if _, _, ok := p.cache.lookup(rel, fileIDOf(&st)); !ok {
		return nil // changed, or never captured: not vouched for
	}
	err = unix.Linkat(fd, "", p.pd, parkName(rel), unix.AT_EMPTY_PATH)
	if errors.Is(err, unix.EEXIST) {
		return nil // a hard link of a file parked already
	}
	if err != nil {
		return fmt.Errorf("parking %s: %w", rel, err)
	}
	p.n++
	return nil
}

// adopt tries to take over the parked file for j: a regular file of the
// right size that only the park references and whose content hashes to
// j.digest is linked into j's directory and returned, open. (nil, nil)
// means nothing usable is parked; the caller fills a new file instead.
func (f *filler) adopt(j fillJob, buf []byte) (*os.File, error) {
	fd, err := unix.Openat(f.reuse, parkName(j.name), unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil
	}
	file := os.NewFile(uintptr(fd), j.name)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Size != j.size || st.Nlink != 1 {
		file.Close()
		return nil, nil
	}
	h := sha256.New()
	if n, err := io.CopyBuffer(h, io.LimitReader(file, j.size+1), buf); err != nil || n != j.size || hex.EncodeToString(h.Sum(nil)) != j.digest {
		file.Close()
		return nil, nil
	}
	if err := unix.Linkat(fd, "", j.dirfd, j.base, unix.AT_EMPTY_PATH); err != nil {
		file.Close()
		if errors.Is(err, unix.EEXIST) {
			return nil, fmt.Errorf("creating %s: %w", j.name, err)
		}
		return nil, nil
	}
	// Drop the park's name now: unlinking moves ctime, which the stat
	// cache entry taken next must already include.
	if err := unix.Unlinkat(f.reuse, parkName(j.name), 0); err != nil {
		file.Close()
		return nil, fmt.Errorf("unparking %s: %w", j.name, err)
	}
	return file, nil
}
