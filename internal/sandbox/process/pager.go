//go:build linux

package process

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/tenon-dev/tenon/internal/anchor/pageout"
	"github.com/tenon-dev/tenon/internal/cgroup"
	"github.com/tenon-dev/tenon/internal/sandbox"
)

var _ sandbox.Pager = (*Backend)(nil)

// PageOut freezes the sandbox, pages the private anonymous memory of
// every process in its cgroup (init included) out with process_madvise
// MADV_PAGEOUT (internal/anchor/pageout) and then reclaims the group
// (cgroup.Reclaim: v1 memory.force_empty, v2 memory.reclaim), which drops
// its clean page cache. The sandbox stays frozen until PageIn or Resume.
// A failure of the page-out itself leaves the sandbox frozen and
// returns the error; a failed reclaim is only logged.
func (b *Backend) PageOut(ctx context.Context, id string) (sandbox.PageStats, error) {
	bx, err := b.get(id)
	if err != nil {
		return sandbox.PageStats{}, err
	}
	start := time.Now()
	st := sandbox.PageStats{MemoryBefore: b.usage(bx)}
	if err := bx.freeze(ctx); err != nil {
		return st, fmt.Errorf("paging out sandbox %s: %w", id, err)
	}
	bx.paused.Store(true)
	if b.cfg.NoSwap { // out of swap but for this page-out
		if err := bx.group.SetSwap(true); err != nil {
			return st, fmt.Errorf("paging out sandbox %s: %w", id, err)
		}
		defer func() {
			if err := bx.group.SetSwap(false); err != nil {
				b.log.Warn("keeping a paged-out sandbox out of swap", "sandbox", id, "err", err)
			}
		}()
	}
	p := &pageout.Pager{ProcRoot: b.procRoot(), Log: b.log}
	err = b.eachProc(bx, func(pid int) error {
		s, err := p.PageOut(pid)
		if err == nil {
			st.Procs++
			st.Bytes += max(s.Before.RssAnon-s.After.RssAnon, 0)
		}
		return err
	})
	if err != nil {
		return st, fmt.Errorf("paging out sandbox %s: %w", id, err)
	}
	if left, err := cgroup.Reclaim(b.cfg.Layout, bx.group); err != nil {
		b.log.Warn("reclaiming sandbox after page-out", "sandbox", id, "left", left, "err", err)
	}
	st.MemoryAfter = b.usage(bx)
	st.Duration = time.Since(start)
	return st, nil
}

// PageIn faults the swapped-out memory of every process of the sandbox
// back in (reading it through /proc/PID/mem while the group is still
// frozen) and thaws the sandbox. It thaws even when the page-in fails.
func (b *Backend) PageIn(ctx context.Context, id string) (sandbox.PageStats, error) {
	return b.pageIn(ctx, id, false)
}

var _ sandbox.WholePager = (*Backend)(nil)

// PageInWhole is PageIn that leaves the sandbox frozen, and returns an
// error wrapping sandbox.ErrPageInIncomplete, when some swapped page could
// not be read back (sandbox.WholePager).
func (b *Backend) PageInWhole(ctx context.Context, id string) (sandbox.PageStats, error) {
	return b.pageIn(ctx, id, true)
}

func (b *Backend) pageIn(ctx context.Context, id string, whole bool) (sandbox.PageStats, error) {
	bx, err := b.get(id)
	if err != nil {
		return sandbox.PageStats{}, err
	}
	start := time.Now()
	st := sandbox.PageStats{MemoryBefore: b.usage(bx)}
	p := &pageout.Pager{ProcRoot: b.procRoot(), Prefetch: pageout.PrefetchRead, Log: b.log}
	var missed int64
	perr := b.eachProc(bx, func(pid int) error {
		s, err := p.PageIn(pid)
		if err == nil {
			st.Procs++
			st.Bytes += s.Faulted
			missed += s.Missed
		}
		return err
	})
	if whole && missed > 0 {
		st.MemoryAfter = b.usage(bx)
		st.Duration = time.Since(start)
		return st, fmt.Errorf("paging in sandbox %s: %d KiB not read back: %w", id, missed>>10, sandbox.ErrPageInIncomplete)
	}
	terr := bx.group.Thaw(ctx)
	if terr == nil {
		bx.paused.Store(false)
	}
	st.MemoryAfter = b.usage(bx)
	st.Duration = time.Since(start)
	if err := errors.Join(perr, terr); err != nil {
		return st, fmt.Errorf("paging in sandbox %s: %w", id, err)
	}
	return st, nil
}

// usage is the group's memory usage (swap excluded); 0 when unreadable.
func (b *Backend) usage(bx *box) int64 {
	m, err := bx.group.Memory()
	if err != nil {
		return 0
	}
	return m.Usage
}

// eachProc calls f for every process of the sandbox's cgroup. A process
// that exits meanwhile (or is a zombie, with no memory left) is skipped; a
// missing process_madvise stops the walk.
func (b *Backend) eachProc(bx *box, f func(pid int) error) error {
	pids, err := bx.group.Pids()
	if err != nil {
		return err
	}
	slices.Sort(pids)
	var errs []error
	for _, pid := range slices.Compact(pids) {
		err := f(pid)
		switch {
		case err == nil, gone(err), b.zombie(pid):
		case errors.Is(err, pageout.ErrNoProcessMadvise):
			return err
		default:
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// zombie reports whether pid has exited but is not reaped yet.
func (b *Backend) zombie(pid int) bool {
	st, err := os.ReadFile(filepath.Join(b.procRoot(), strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	// pid (comm) S ...: the state follows the last ')'.
	i := bytes.LastIndexByte(st, ')')
	return i >= 0 && i+2 < len(st) && st[i+2] == 'Z'
}

// gone reports whether err says the process no longer exists.
func gone(err error) bool {
	return errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ESRCH)
}
