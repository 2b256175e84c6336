//go:build linux

package suspend

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/anchor/anchortest"
	"github.com/tenon-dev/tenon/internal/anchor/broker"
	"github.com/tenon-dev/tenon/internal/anchor/pageout"
)

// TestLiveBrokerEndToEnd: a 128 MiB heap harness in a cgroup, a broker
// with a 200 ms grace and Watch. A model call longer than the grace gets
// the harness frozen and paged out; the reasoning end pages it in; the
// response thaws it and the heap verifies and continues. A model call of
// one agent while another runs a tool never pages out.
func TestLiveBrokerEndToEnd(t *testing.T) {
	anchortest.Swap(t, 512<<20, "live suspension test")
	_, g := anchortest.Group(t, fmt.Sprintf("tenon-test-suspend-%d", os.Getpid()), "live suspension test")

	// The harness: a heap child placed in g before it allocates.
	heap := anchortest.StartHeap(t, g, heapEnv, 128)
	verify := heap.Verify
	pager := &pageout.Pager{}
	rss := func() int64 {
		r, err := pager.Status(heap.Pid())
		if err != nil {
			t.Fatal(err)
		}
		return r.RssAnon
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b := broker.New(broker.Options{Grace: 200 * time.Millisecond})
	h := New(g, pager, slog.New(slog.DiscardHandler))
	suspended := make(chan Record, 4)
	go Watch(ctx, b, h, 20*time.Millisecond, func(r Record, err error) {
		if err != nil {
			t.Errorf("suspension: %v", err)
		}
		suspended <- r
	})
	apply := func(d broker.Decision) Record {
		rec, err := h.Apply(ctx, b, d)
		if err != nil {
			t.Fatalf("Apply(%v): %v", d.Action, err)
		}
		return rec
	}

	// A model call longer than the grace.
	before := rss()
	start := time.Now()
	b.ModelBegin("parent")
	var rec Record
	select {
	case rec = <-suspended:
	case <-time.After(10 * time.Second):
		t.Fatal("harness was not suspended during a long model call")
	}
	if since := time.Since(start); since < 200*time.Millisecond || !rec.Confirmed {
		t.Fatalf("suspension after %v, confirmed %v", since, rec.Confirmed)
	}
	paged := rss()
	t.Logf("suspend: freeze %v, page-out total %v, RssAnon %d -> %d MiB", rec.Freeze, rec.Total, before>>20, paged>>20)
	if paged > before/5 {
		t.Errorf("RssAnon %d MiB after suspension, want under a fifth of %d MiB", paged>>20, before>>20)
	}
	pre := apply(b.ReasoningEnd("parent"))
	res := apply(b.ModelEnd("parent"))
	after := rss()
	t.Logf("prefetch %v, resume (thaw) %v, RssAnon %d MiB", pre.Total, res.Total, after>>20)
	if pre.Action != broker.Prefetch || res.Action != broker.Resume || after < before*8/10 {
		t.Errorf("prefetch %v resume %v RssAnon %d MiB, want prefetch, resume and most of %d MiB back", pre.Action, res.Action, after>>20, before>>20)
	}
	v1 := verify()
	time.Sleep(150 * time.Millisecond)
	if v2 := verify(); v2 <= v1 {
		t.Errorf("heap did not continue after resume: step %d then %d", v1, v2)
	}

	// A tool in flight: never suspended, however long the other agent waits.
	b.ToolBegin("parent")
	b.ModelBegin("sub")
	time.Sleep(700 * time.Millisecond)
	if b.Suspended() || h.Suspensions() != 1 {
		t.Errorf("suspended with a tool call in flight (suspensions %d)", h.Suspensions())
	}
	if r := rss(); r < before*8/10 {
		t.Errorf("RssAnon %d MiB with a tool in flight, want it resident", r>>20)
	}
	b.ToolEnd("parent")
	b.AgentExit("parent")
	b.ModelEnd("sub")
	cancel()
}
