//go:build linux

package pageout

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/anchor/anchortest"
	"github.com/tenon-dev/tenon/internal/swap"
)

// zramStat reads zram0's mm_stat.
func zramStat(t *testing.T) swap.MMStat {
	st, err := swap.GetStatus()
	if err != nil || st.MM == nil {
		t.Fatalf("zram status: %v", err)
	}
	return *st.MM
}

// TestLivePageOutIn pages a 256 MiB heap out to zram and back in with each
// prefetch method, and proves the heap's content and progress survive.
func TestLivePageOutIn(t *testing.T) {
	anchortest.Swap(t, 1<<30, "live page-out test")
	_, g := anchortest.Group(t, fmt.Sprintf("tenon-test-pageout-%d-heap", os.Getpid()), "live page-out test")
	const mib = 256
	h := anchortest.StartHeap(t, g, heapEnv, mib)
	pid := h.Pid()
	time.Sleep(200 * time.Millisecond) // a few steps
	last := h.Verify()

	for _, method := range []Prefetch{PrefetchBoth, PrefetchWillNeed, PrefetchRead} {
		t.Run(method.String(), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := g.Freeze(ctx); err != nil {
				t.Fatalf("Freeze: %v", err)
			}
			p := &Pager{Prefetch: method}
			out, err := p.PageOut(pid)
			if err != nil {
				g.Thaw(ctx)
				t.Fatalf("PageOut: %v", err)
			}
			zs := zramStat(t)
			in, err := p.PageIn(pid)
			if terr := g.Thaw(ctx); terr != nil {
				t.Fatalf("Thaw: %v", terr)
			}
			if err != nil {
				t.Fatalf("PageIn: %v", err)
			}
			t.Logf("page-out %v: %d ranges, RssAnon %d -> %d MiB, VmSwap %d MiB; zram orig %d MiB compr %d MiB used %d MiB",
				out.Duration, out.Ranges, out.Before.RssAnon>>20, out.After.RssAnon>>20, out.After.VmSwap>>20,
				zs.OrigDataSize>>20, zs.ComprDataSize>>20, zs.MemUsedTotal>>20)
			t.Logf("page-in (%v) %v: RssAnon %d -> %d MiB, VmSwap %d MiB, faulted %d MiB",
				method, in.Duration, in.Before.RssAnon>>20, in.After.RssAnon>>20, in.After.VmSwap>>20, in.Faulted>>20)

			if drop := out.Before.RssAnon - out.After.RssAnon; drop < mib<<20*8/10 {
				t.Errorf("page-out freed %d MiB of RssAnon, want at least 80%% of %d MiB", drop>>20, mib)
			}
			if method != PrefetchWillNeed && in.After.RssAnon < out.Before.RssAnon*8/10 {
				t.Errorf("page-in restored RssAnon to %d MiB, want at least 80%% of %d MiB", in.After.RssAnon>>20, out.Before.RssAnon>>20)
			}
			start := time.Now()
			step := h.Verify()
			t.Logf("full verification after resume took %v", time.Since(start))
			time.Sleep(150 * time.Millisecond)
			if again := h.Verify(); again <= step || step < last {
				t.Errorf("heap did not continue: steps %d, %d, %d", last, step, again)
			} else {
				last = again
			}
		})
	}
}
