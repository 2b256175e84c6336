//go:build linux

package pageout

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// PageOut advises MADV_PAGEOUT over pid's anonymous mappings (and reclaims
// the v2 group when ReclaimDir is set). Call it on a stopped or frozen
// process: pages a running process touches again come straight back.
func (p *Pager) PageOut(pid int) (Stats, error) {
	var st Stats
	start := time.Now()
	var err error
	if st.Before, err = p.Status(pid); err != nil {
		return st, err
	}
	rs, err := p.ranges(pid)
	if err != nil {
		return st, err
	}
	st.Ranges = len(rs)
	if st.Bytes, err = madvise(pid, rs, unix.MADV_PAGEOUT); err != nil {
		return st, fmt.Errorf("paging out %d: %w", pid, err)
	}
	if p.ReclaimDir != "" {
		st.Reclaimed, err = reclaimV2(p.ReclaimDir)
		if err != nil {
			p.log().Warn("memory.reclaim after page-out", "dir", p.ReclaimDir, "err", err)
		}
	}
	st.Duration = time.Since(start)
	st.After, err = p.Status(pid)
	return st, err
}

// PageIn prefetches pid's anonymous mappings with the Pager's method.
func (p *Pager) PageIn(pid int) (Stats, error) {
	var st Stats
	start := time.Now()
	var err error
	if st.Before, err = p.Status(pid); err != nil {
		return st, err
	}
	rs, err := p.ranges(pid)
	if err != nil {
		return st, err
	}
	st.Ranges = len(rs)
	if p.Prefetch != PrefetchRead {
		if st.Bytes, err = madvise(pid, rs, unix.MADV_WILLNEED); err != nil {
			return st, fmt.Errorf("paging in %d: %w", pid, err)
		}
	}
	if p.Prefetch != PrefetchWillNeed {
		if st.Faulted, st.Missed, err = p.faultIn(pid, rs); err != nil {
			return st, fmt.Errorf("paging in %d: %w", pid, err)
		}
	}
	st.Duration = time.Since(start)
	st.After, err = p.Status(pid)
	return st, err
}

// reclaimV2 writes memory.current to memory.reclaim in dir. It reports
// false without error where the file does not exist.
func reclaimV2(dir string) (bool, error) {
	b, err := os.ReadFile(filepath.Join(dir, "memory.current"))
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return false, fmt.Errorf("parsing memory.current: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, "memory.reclaim"), os.O_WRONLY, 0)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	if _, err := f.WriteString(strconv.FormatInt(n, 10)); err != nil && !errors.Is(err, unix.EAGAIN) {
		return true, err
	}
	return true, nil
}
