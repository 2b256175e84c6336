package census

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"syscall"

	"golang.org/x/sys/unix"
)

type fileID struct{ dev, ino uint64 }

// fileScanner finds the resident pages of files with mincore and hashes
// them, once per file.
type fileScanner struct {
	pageSize int
	snap     *Snapshot
	pages    map[fileID][]int // page indices per scanned file
	index    map[FileKey]int  // page index per file page
	// markShared flags the pages of every file scanned meanwhile as the
	// shared read-only layer's (FlagShared).
	markShared bool
}

func newFileScanner(snap *Snapshot) *fileScanner {
	return &fileScanner{
		pageSize: snap.PageSize,
		snap:     snap,
		pages:    make(map[fileID][]int),
		index:    make(map[FileKey]int),
	}
}

// scanPath opens and scans one file; holder < 0 attributes it to no sibling.
func (s *fileScanner) scanPath(path string, holder int32) (fileID, error) {
	f, err := os.Open(path)
	if err != nil {
		return fileID{}, fmt.Errorf("opening %s: %w", path, err)
	}
	defer f.Close()
	return s.scanFile(f, holder)
}

// scanFile records every resident page of f (mincore over a read-only
// shared mapping of the whole file) and hashes it by reading the mapping:
// resident pages only, under MADV_RANDOM, so nothing is read in.
func (s *fileScanner) scanFile(f *os.File, holder int32) (fileID, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return fileID{}, fmt.Errorf("stat %s: %w", f.Name(), err)
	}
	id := fileID{dev: st.Dev, ino: st.Ino}
	if idx, ok := s.pages[id]; ok {
		s.addHolder(idx, holder)
		s.mark(idx)
		return id, nil
	}
	s.pages[id] = nil
	if st.Mode&unix.S_IFMT != unix.S_IFREG || st.Size == 0 {
		return id, nil
	}
	s.snap.Stats.Files++
	idx, err := s.residentPages(f, id, st.Size)
	s.pages[id] = idx
	s.addHolder(idx, holder)
	s.mark(idx)
	return id, err
}

// mark flags the pages idx as the shared layer's while markShared is set.
func (s *fileScanner) mark(idx []int) {
	if !s.markShared {
		return
	}
	for _, i := range idx {
		s.snap.Pages[i].Flags |= FlagShared
	}
}

func (s *fileScanner) addHolder(idx []int, holder int32) {
	if holder < 0 {
		return
	}
	for _, i := range idx {
		s.snap.Pages[i].Holders = addHolder(s.snap.Pages[i].Holders, holder)
	}
}

func (s *fileScanner) residentPages(f *os.File, id fileID, size int64) (idx []int, err error) {
	if int64(int(size)) != size {
		return nil, fmt.Errorf("mapping %s: file too large", f.Name())
	}
	data, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("mapping %s: %w", f.Name(), err)
	}
	defer unix.Munmap(data)
	_ = unix.Madvise(data, unix.MADV_RANDOM)
	ps := s.pageSize
	vec := make([]byte, (len(data)+ps-1)/ps)
	if err := mincore(data, vec); err != nil {
		return nil, fmt.Errorf("mincore %s: %w", f.Name(), err)
	}
	// A file truncated under us turns a read of the mapping into SIGBUS;
	// make that a recoverable panic and keep what was hashed.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("reading %s: fault: %v", f.Name(), r)
		}
	}()
	pad := make([]byte, ps)
	for i, v := range vec {
		if v&1 == 0 {
			continue
		}
		lo := i * ps
		hi := min(lo+ps, len(data))
		var h Hash
		if hi-lo == ps {
			h = HashPage(data[lo:hi])
		} else {
			clear(pad)
			copy(pad, data[lo:hi])
			h = HashPage(pad)
		}
		key := FileKey{Dev: id.dev, Ino: id.ino, Off: int64(lo)}
		s.index[key] = len(s.snap.Pages)
		idx = append(idx, len(s.snap.Pages))
		s.snap.Pages = append(s.snap.Pages, Page{Kind: File, File: key, Hash: h})
	}
	return idx, nil
}

// scanDir scans every regular file under dir.
func (s *fileScanner) scanDir(dir string, holder int32) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
				return nil
			}
			return fmt.Errorf("walking %s: %w", dir, err)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if _, err := s.scanPath(p, holder); err != nil && !skippable(err) {
			return err
		}
		return nil
	})
}

// skippable errors are files that vanished or cannot be mapped (special
// files, permission), which the census passes over.
func skippable(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) ||
		errors.Is(err, syscall.ENODEV) || errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EINVAL)
}

// addHolder inserts h into a small set kept as a slice.
func addHolder(hs []int32, h int32) []int32 {
	for _, x := range hs {
		if x == h {
			return hs
		}
	}
	return append(hs, h)
}
