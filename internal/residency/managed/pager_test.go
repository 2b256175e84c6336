package managed

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tenon-dev/tenon/internal/residency"
	"github.com/tenon-dev/tenon/internal/sandbox"
	"github.com/tenon-dev/tenon/internal/swap"
)

// pagingBackend adds a recording sandbox.Pager to a dirBackend.
type pagingBackend struct {
	*dirBackend
	calls []string
}

func (b *pagingBackend) PageOut(_ context.Context, id string) (sandbox.PageStats, error) {
	b.calls = append(b.calls, "out "+id)
	return sandbox.PageStats{MemoryBefore: 100, MemoryAfter: 10, Bytes: 80}, nil
}

func (b *pagingBackend) PageIn(_ context.Context, id string) (sandbox.PageStats, error) {
	b.calls = append(b.calls, "in "+id)
	return sandbox.PageStats{MemoryBefore: 10, MemoryAfter: 100, Bytes: 80}, nil
}

func TestPageOutHost(t *testing.T) {
	swapOn := swap.Status{Active: true, Swaps: []swap.SwapEntry{{Filename: "/dev/zram0"}},
		MM: &swap.MMStat{OrigDataSize: 64 << 20, MemUsedTotal: 16 << 20}}
	tests := []struct {
		name      string
		b         sandbox.Backend
		st        swap.Status
		stErr     error
		wantPager bool
		wantWhy   string
		wantRatio float64 // 0: unknown
	}{
		{"pages with zram", &pagingBackend{dirBackend: newDirBackend(t.TempDir())}, swapOn, nil, true, "", 0.25},
		{"zram nearly empty", &pagingBackend{dirBackend: newDirBackend(t.TempDir())},
			swap.Status{Active: true, Swaps: swapOn.Swaps, MM: &swap.MMStat{OrigDataSize: 1 << 20, MemUsedTotal: 1 << 18}}, nil, true, "", 0},
		{"disk swap only", &pagingBackend{dirBackend: newDirBackend(t.TempDir())},
			swap.Status{Swaps: []swap.SwapEntry{{Filename: "/swapfile"}}}, nil, true, "", 0},
		{"swap off", &pagingBackend{dirBackend: newDirBackend(t.TempDir())}, swap.Status{}, nil, false, "swap is off", 0},
		{"swap unreadable", &pagingBackend{dirBackend: newDirBackend(t.TempDir())}, swap.Status{}, errors.New("no /proc/swaps"), false, "cannot read the swap status", 0},
		{"backend cannot page", newDirBackend(t.TempDir()), swapOn, nil, false, "cannot page sandboxes out", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := NewHost(HostConfig{Backend: tt.b, Dir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			rh, why := pageOutHost(h, func() (swap.Status, error) { return tt.st, tt.stErr })
			p, ok := rh.(residency.Pager)
			if ok != tt.wantPager || !strings.Contains(why, tt.wantWhy) || (why == "") != tt.wantPager {
				t.Fatalf("pageOutHost: pager %v, why %q; want pager %v, why containing %q", ok, why, tt.wantPager, tt.wantWhy)
			}
			if !ok {
				return
			}
			r, known := p.CompressionRatio()
			if known != (tt.wantRatio > 0) || r != tt.wantRatio {
				t.Errorf("CompressionRatio = %v, %v; want %v", r, known, tt.wantRatio)
			}
			st, err := p.PageOut(context.Background(), "sb")
			if err != nil || st.Bytes != 80 || st.MemoryAfter != 10 {
				t.Errorf("PageOut = %+v, %v", st, err)
			}
			if calls := tt.b.(*pagingBackend).calls; len(calls) != 1 || calls[0] != "out sb" {
				t.Errorf("backend calls = %v", calls)
			}
		})
	}
}
