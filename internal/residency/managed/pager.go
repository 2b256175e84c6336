package managed

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tenon-dev/tenon/internal/residency"
	"github.com/tenon-dev/tenon/internal/sandbox"
	"github.com/tenon-dev/tenon/internal/swap"
)

// ratioMaxAge bounds how long a compression ratio read from zram is used.
const ratioMaxAge = time.Second

// minRatioSample is the least data zram must hold before its ratio is
// believed (a few pages say nothing about the next sandbox's).
const minRatioSample = 4 << 20

// pagingHost is a Host whose backend pages sandboxes out (sandbox.Pager)
// on a host with swap on: residency's page-out capability.
type pagingHost struct {
	*Host
	pager  sandbox.Pager
	status func() (swap.Status, error) // swap.GetStatus; tests replace it

	mu    sync.Mutex
	ratio float64
	ok    bool
	read  time.Time
}

var _ residency.Pager = (*pagingHost)(nil)

func (h *pagingHost) PageOut(ctx context.Context, id string) (residency.PageStats, error) {
	st, err := h.pager.PageOut(ctx, id)
	return pageStats(st), err
}

func (h *pagingHost) PageIn(ctx context.Context, id string) (residency.PageStats, error) {
	st, err := h.pager.PageIn(ctx, id)
	return pageStats(st), err
}

var _ residency.WholePager = (*pagingHost)(nil)

// PageInWhole is the backend's PageInWhole where it has one, else PageIn.
func (h *pagingHost) PageInWhole(ctx context.Context, id string) (residency.PageStats, error) {
	wp, ok := h.pager.(sandbox.WholePager)
	if !ok {
		return h.PageIn(ctx, id)
	}
	st, err := wp.PageInWhole(ctx, id)
	if errors.Is(err, sandbox.ErrPageInIncomplete) {
		err = fmt.Errorf("%w: %w", residency.ErrPageInIncomplete, err)
	}
	return pageStats(st), err
}

// CompressionRatio is zram's mem_used_total / orig_data_size (what the
// compressed copy costs the host per byte stored, allocator overhead
// included), read at most once a second; unknown while zram is off or
// holds less than 4 MiB.
func (h *pagingHost) CompressionRatio() (float64, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if now := time.Now(); now.Sub(h.read) >= ratioMaxAge {
		h.read = now
		h.ratio, h.ok = 0, false
		if st, err := h.status(); err == nil && st.Active && st.MM != nil && st.MM.OrigDataSize >= minRatioSample {
			h.ratio, h.ok = float64(st.MM.MemUsedTotal)/float64(st.MM.OrigDataSize), true
		}
	}
	return h.ratio, h.ok
}

func pageStats(st sandbox.PageStats) residency.PageStats {
	return residency.PageStats{MemoryBefore: st.MemoryBefore, MemoryAfter: st.MemoryAfter, Bytes: st.Bytes, Duration: st.Duration}
}

// pageOutHost returns the host residency should use: h with the page-out
// capability when the backend can page and swap is on, else h itself and
// the reason the tier is skipped.
func pageOutHost(h *Host, status func() (swap.Status, error)) (residency.Host, string) {
	p, ok := h.cfg.Backend.(sandbox.Pager)
	if !ok {
		return h, "the " + h.cfg.Backend.Name() + " backend cannot page sandboxes out"
	}
	st, err := status()
	if err != nil {
		return h, "cannot read the swap status: " + err.Error()
	}
	if len(st.Swaps) == 0 {
		return h, "swap is off (tenon swap enable turns zram swap on)"
	}
	return &pagingHost{Host: h, pager: p, status: status}, ""
}
