package census

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"

	"github.com/tenon-dev/tenon/internal/procfs"
)

// Sample takes one census snapshot of the swarm described by opts.
//
// It freezes every Options.Freezer (verified, bounded by FreezeTimeout),
// lists the siblings' processes, reads their present pages, scans the
// files they map and the given directories, and thaws. Thawing happens in a
// deferred call, so it also runs on error, on a panic and when ctx is
// cancelled (callers should cancel ctx on SIGINT rather than exit).
// Snapshot.Freeze records how long the siblings were frozen (0 without
// freezers). On error no snapshot is returned.
//
// Without freezers the siblings keep running, so pages can change between
// the pagemap read and the content read; a page that leaves memory in that
// gap is read back in by /proc/PID/mem. Freeze for exact numbers.
func Sample(ctx context.Context, opts Options) (snap *Snapshot, err error) {
	o := opts.withDefaults()
	if len(o.Siblings) == 0 {
		return nil, ErrNoSiblings
	}
	start := o.Clock.Now()
	cur := &Snapshot{Taken: start, PageSize: o.PageSize}
	if !o.Start.IsZero() {
		cur.Elapsed = start.Sub(o.Start)
	}
	for _, s := range o.Siblings {
		cur.Siblings = append(cur.Siblings, s.Name)
	}
	zero := o.ZeroPFN
	if zero == 0 {
		if zero, err = ZeroPFN(o.Proc); err != nil {
			return nil, fmt.Errorf("probing zero page: %w", err)
		}
	}
	if zero == 0 {
		return nil, ErrNoPFN
	}

	thaw, err := freezeAll(ctx, o.Freezers, o.FreezeTimeout)
	frozenAt := o.Clock.Now()
	defer func() {
		if len(o.Freezers) > 0 {
			cur.Freeze = o.Clock.Now().Sub(frozenAt)
		}
		if terr := thaw(); terr != nil {
			err = errors.Join(err, terr)
		}
		cur.Duration = o.Clock.Now().Sub(start)
		snap = cur
		if err != nil {
			snap = nil
		}
	}()
	if err != nil {
		return nil, err
	}

	sc := &sampler{opts: o, snap: cur, zeroPFN: zero, files: newFileScanner(cur),
		anon: make(map[uint64]int), mapped: make(map[fileID]fileID), overlays: make(map[string][]overlayMount)}
	if f, ferr := os.Open(o.KPageFlags); ferr == nil {
		defer f.Close()
		sc.flags = &flagsReader{r: f}
	} else {
		o.Logger.Warn("census: kpageflags unreadable, telling anon pages by pagemap only", "err", ferr)
	}
	if err := sc.run(ctx); err != nil {
		return nil, err
	}
	compact(cur)
	return cur, nil
}

type sampler struct {
	opts    Options
	snap    *Snapshot
	zeroPFN uint64
	flags   *flagsReader
	files   *fileScanner
	anon    map[uint64]int    // page index per anonymous frame
	mapped  map[fileID]fileID // maps (dev, inode) → stat identity of the scanned file
	buf     []byte
	// overlays are the overlay mounts per mount namespace seen, and cur
	// those of the process being read.
	overlays map[string][]overlayMount
	cur      []overlayMount
}

func (s *sampler) run(ctx context.Context) error {
	seen := make(map[int]bool)
	for i, sib := range s.opts.Siblings {
		pids := append([]int(nil), sib.Pids...)
		for _, cg := range sib.Cgroups {
			p, err := CgroupPids(cg)
			if err != nil {
				return fmt.Errorf("sibling %s: %w", sib.Name, err)
			}
			pids = append(pids, p...)
		}
		for _, pid := range pids {
			if seen[pid] {
				continue
			}
			seen[pid] = true
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("sampling: %w", err)
			}
			if err := s.process(pid, int32(i)); err != nil {
				if isGone(err) {
					s.snap.Stats.Vanished++
					continue
				}
				return fmt.Errorf("sibling %s pid %d: %w", sib.Name, pid, err)
			}
			s.snap.Stats.Processes++
		}
	}
	for i, sib := range s.opts.Siblings {
		for _, d := range sib.Dirs {
			if err := s.files.scanDir(d, int32(i)); err != nil {
				return fmt.Errorf("sibling %s: %w", sib.Name, err)
			}
		}
	}
	s.snap.SharedDirs = s.sharedDirs()
	s.files.markShared = true
	defer func() { s.files.markShared = false }()
	for _, d := range s.snap.SharedDirs {
		if err := s.files.scanDir(d, -1); err != nil {
			return fmt.Errorf("shared layer: %w", err)
		}
	}
	return nil
}

// sharedDirs are Options.SharedDirs and, with Options.DiscoverShared, the
// lower directories of every overlay a sibling's process sees, each once.
func (s *sampler) sharedDirs() []string {
	out := slices.Clone(s.opts.SharedDirs)
	if s.opts.DiscoverShared {
		for _, ns := range slices.Sorted(maps.Keys(s.overlays)) {
			for _, o := range s.overlays[ns] {
				out = append(out, o.lowers...)
			}
		}
	}
	seen := make(map[string]bool)
	return slices.DeleteFunc(out, func(d string) bool {
		dup := seen[filepath.Clean(d)]
		seen[filepath.Clean(d)] = true
		return dup
	})
}

// overlaysOf reads the overlay mounts of the process at dir (/proc/PID),
// once per mount namespace; none when its mount table is unreadable.
func (s *sampler) overlaysOf(dir string) []overlayMount {
	key, err := os.Readlink(filepath.Join(dir, "ns", "mnt"))
	if err != nil {
		key = dir
	}
	if ovs, ok := s.overlays[key]; ok {
		return ovs
	}
	f, err := os.Open(filepath.Join(dir, "mountinfo"))
	if err != nil {
		s.opts.Logger.Debug("census: mount table unreadable", "proc", dir, "err", err)
		return nil
	}
	defer f.Close()
	ms, err := procfs.ParseMountinfo(f)
	if err != nil {
		s.opts.Logger.Debug("census: mount table unreadable", "proc", dir, "err", err)
		return nil
	}
	ovs := overlayMounts(ms)
	s.overlays[key] = ovs
	return ovs
}

func isGone(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH)
}

func (s *sampler) process(pid int, holder int32) error {
	dir := filepath.Join(s.opts.Proc, strconv.Itoa(pid))
	mf, err := os.Open(filepath.Join(dir, "maps"))
	if err != nil {
		return fmt.Errorf("opening maps: %w", err)
	}
	maps, err := procfs.ParseMaps(mf)
	mf.Close()
	if err != nil {
		return err
	}
	pm, err := os.Open(filepath.Join(dir, "pagemap"))
	if err != nil {
		return fmt.Errorf("opening pagemap: %w", err)
	}
	defer pm.Close()
	mem, err := os.Open(filepath.Join(dir, "mem"))
	if err != nil {
		return fmt.Errorf("opening mem: %w", err)
	}
	defer mem.Close()
	s.cur = s.overlaysOf(dir)
	ranges, filtered := s.opts.Ranges[pid]
	for _, m := range maps {
		if m.Special() || !m.Readable() {
			continue
		}
		spans := []AddrRange{{m.Start, m.End}}
		if filtered {
			spans = intersect(m, ranges)
		}
		for _, sp := range spans {
			if err := s.span(dir, pm, mem, m, sp, holder); err != nil {
				return err
			}
		}
	}
	return nil
}

// intersect clips the filter ranges to one mapping.
func intersect(m procfs.Mapping, rs []AddrRange) []AddrRange {
	var out []AddrRange
	for _, r := range rs {
		lo, hi := max(r.Start, m.Start), min(r.End, m.End)
		if lo < hi {
			out = append(out, AddrRange{lo, hi})
		}
	}
	return out
}

const pagemapChunk = 8192 // pages per pagemap read

// span reads the present pages of one address range of one mapping.
func (s *sampler) span(dir string, pm, mem io.ReaderAt, m procfs.Mapping, sp AddrRange, holder int32) error {
	ps := uint64(s.opts.PageSize)
	sp.Start -= sp.Start % ps
	flags := make([]KPageFlags, pagemapChunk)
	pfns := make([]uint64, pagemapChunk)
	for addr := sp.Start; addr < sp.End; {
		n := int(min((sp.End-addr+ps-1)/ps, pagemapChunk))
		ents, err := ReadPagemap(pm, addr, n, ps)
		if err != nil {
			return err
		}
		any := false
		for i, e := range ents {
			pfns[i] = 0
			if e.Present() && !e.Swapped() {
				pfns[i] = e.PFN()
				any = true
				if pfns[i] == 0 {
					return ErrNoPFN
				}
			}
		}
		if any {
			if err := s.pages(dir, mem, m, addr, ents, pfns[:n], flags[:n], holder); err != nil {
				return err
			}
		}
		addr += uint64(n) * ps
	}
	return nil
}

// pages classifies one chunk of pagemap entries and hashes the new
// anonymous pages, one pread per run of consecutive new pages.
func (s *sampler) pages(dir string, mem io.ReaderAt, m procfs.Mapping, addr uint64, ents []PagemapEntry, pfns []uint64, flags []KPageFlags, holder int32) error {
	ps := uint64(s.opts.PageSize)
	known := s.flags != nil
	if known {
		if err := s.flags.lookup(pfns, flags); err != nil {
			return err
		}
	}
	runStart, runLen := uint64(0), 0
	var runIdx []int
	flush := func() {
		if runLen > 0 {
			s.hashAnon(mem, runStart, runIdx)
		}
		runLen, runIdx = 0, runIdx[:0]
	}
	for i, e := range ents {
		va := addr + uint64(i)*ps
		if pfns[i] == 0 {
			flush()
			continue
		}
		var fl KPageFlags
		if known {
			fl = flags[i]
		}
		if fl.Zero() || pfns[i] == s.zeroPFN {
			s.snap.Stats.ZeroPages++
			flush()
			continue
		}
		anon := !e.FileShared()
		if known {
			anon = fl.Anon()
		}
		if !anon {
			flush()
			if err := s.filePage(dir, mem, m, va, pfns[i], fl, holder); err != nil {
				return err
			}
			continue
		}
		if j, ok := s.anon[pfns[i]]; ok {
			s.snap.Pages[j].Holders = addHolder(s.snap.Pages[j].Holders, holder)
			flush()
			continue
		}
		s.count(fl)
		j := len(s.snap.Pages)
		s.anon[pfns[i]] = j
		s.snap.Pages = append(s.snap.Pages, Page{Kind: Anon, PFN: pfns[i], Holders: []int32{holder}, Flags: pageFlags(fl)})
		if runLen == 0 || runLen == 256 {
			flush()
			runStart = va
		}
		runLen++
		runIdx = append(runIdx, j)
	}
	flush()
	return nil
}

func (s *sampler) count(fl KPageFlags) {
	if fl.THP() {
		s.snap.Stats.THPPages++
	}
	if fl.KSM() {
		s.snap.Stats.KSMPages++
	}
}

func pageFlags(fl KPageFlags) PageFlag {
	var f PageFlag
	if fl.THP() {
		f |= FlagTHP
	}
	if fl.KSM() {
		f |= FlagKSM
	}
	return f
}

// hashAnon reads len(idx) consecutive pages at va through /proc/PID/mem
// and fills in their hashes; pages that cannot be read are marked for
// removal (Kind 0).
func (s *sampler) hashAnon(mem io.ReaderAt, va uint64, idx []int) {
	ps := s.opts.PageSize
	need := len(idx) * ps
	if cap(s.buf) < need {
		s.buf = make([]byte, need)
	}
	buf := s.buf[:need]
	n, _ := mem.ReadAt(buf, int64(va))
	for k, j := range idx {
		lo := k * ps
		if lo+ps > n {
			// Fall back to the page alone: a run can straddle a page the
			// kernel refuses to copy.
			if got, _ := mem.ReadAt(buf[lo:lo+ps], int64(va)+int64(lo)); got < ps {
				s.snap.Pages[j].Kind = 0
				s.snap.Stats.Unreadable++
				continue
			}
		}
		s.snap.Pages[j].Hash = HashPage(buf[lo : lo+ps])
	}
}

// filePage attributes one present page-cache page of a mapping to holder,
// scanning the mapped file first if it is new.
func (s *sampler) filePage(dir string, mem io.ReaderAt, m procfs.Mapping, va, pfn uint64, fl KPageFlags, holder int32) error {
	if m.Inode == 0 {
		s.snap.Stats.SpecialPages++
		return nil
	}
	mid := fileID{dev: m.Dev(), ino: m.Inode}
	id, ok := s.mapped[mid]
	if !ok {
		var err error
		id, err = s.openMapped(dir, m)
		if err != nil {
			return err
		}
		s.mapped[mid] = id
	}
	key := FileKey{Dev: id.dev, Ino: id.ino, Off: int64(m.Offset + (va - m.Start))}
	if j, ok := s.files.index[key]; ok {
		s.snap.Pages[j].Holders = addHolder(s.snap.Pages[j].Holders, holder)
		s.snap.Pages[j].PFN = pfn
		return nil
	}
	// Present in the mapping but not found by mincore (evicted since, or a
	// file we could not open): hash it through the process.
	s.count(fl)
	j := len(s.snap.Pages)
	s.files.index[key] = j
	s.snap.Pages = append(s.snap.Pages, Page{Kind: File, File: key, PFN: pfn, Holders: []int32{holder}, Flags: pageFlags(fl)})
	s.hashAnon(mem, va, []int{j})
	return nil
}

// openMapped scans the file behind a mapping: the layer file below when
// the mapping is of a file of an overlay (overlayMount.realPath), else the
// file opened through /proc/PID/map_files (which works across mount
// namespaces and for deleted files), falling back to /proc/PID/root/<path>.
// A file that cannot be opened keeps the maps identity; its pages are then
// hashed one by one.
func (s *sampler) openMapped(dir string, m procfs.Mapping) (fileID, error) {
	var paths []string
	if o, ok := overlayOf(s.cur, m.Dev()); ok {
		if p := o.realPath(m.Path); p != "" {
			paths = append(paths, p)
		}
	}
	paths = append(paths,
		filepath.Join(dir, "map_files", fmt.Sprintf("%x-%x", m.Start, m.End)),
		filepath.Join(dir, "root", m.Path),
	)
	var last error
	for _, p := range paths {
		id, err := s.files.scanPath(p, -1)
		if err == nil {
			return id, nil
		}
		last = err
		if !skippable(err) {
			return fileID{}, err
		}
	}
	s.opts.Logger.Debug("census: mapped file not scanned", "path", m.Path, "err", last)
	return fileID{dev: m.Dev(), ino: m.Inode}, nil
}

// compact drops pages whose content could not be read.
func compact(snap *Snapshot) {
	out := snap.Pages[:0]
	for _, p := range snap.Pages {
		if p.Kind != 0 {
			out = append(out, p)
		}
	}
	snap.Pages = out
}
