package suspend

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/anchor/broker"
	"github.com/tenon-dev/tenon/internal/anchor/pageout"
	"github.com/tenon-dev/tenon/internal/cgroup"
	"github.com/tenon-dev/tenon/internal/clock/clocktest"
)

// fakeGroup records freezer calls; other Group methods are not used.
type fakeGroup struct {
	cgroup.Group
	mu   sync.Mutex
	log  []string
	pids []int
}

func (g *fakeGroup) add(s string)                 { g.mu.Lock(); g.log = append(g.log, s); g.mu.Unlock() }
func (g *fakeGroup) Freeze(context.Context) error { g.add("freeze"); return nil }
func (g *fakeGroup) Thaw(context.Context) error   { g.add("thaw"); return nil }
func (g *fakeGroup) Pids() ([]int, error)         { return g.pids, nil }

// fakePager logs into the same sequence.
type fakePager struct{ g *fakeGroup }

func (p fakePager) PageOut(pid int) (pageout.Stats, error) {
	p.g.add("out")
	return pageout.Stats{}, nil
}
func (p fakePager) PageIn(pid int) (pageout.Stats, error) { p.g.add("in"); return pageout.Stats{}, nil }

func TestApply(t *testing.T) {
	tests := []struct {
		name string
		// run drives the broker and the actuator.
		run  func(t *testing.T, ctx context.Context, b *broker.Broker, h *Harness, c *clocktest.Manual)
		want string
	}{
		{"suspend then resume pages in before thaw", func(t *testing.T, ctx context.Context, b *broker.Broker, h *Harness, c *clocktest.Manual) {
			b.ModelBegin("a")
			c.Advance(time.Second)
			mustApply(t, ctx, b, h, b.Tick())
			mustApply(t, ctx, b, h, b.ModelEnd("a"))
		}, "freeze out out in in thaw"},
		{"prefetch is not repeated on resume", func(t *testing.T, ctx context.Context, b *broker.Broker, h *Harness, c *clocktest.Manual) {
			b.ModelBegin("a")
			c.Advance(time.Second)
			mustApply(t, ctx, b, h, b.Tick())
			mustApply(t, ctx, b, h, b.ReasoningEnd("a"))
			mustApply(t, ctx, b, h, b.ModelEnd("a"))
		}, "freeze out out in in thaw"},
		{"a call racing the freeze cancels the page-out", func(t *testing.T, ctx context.Context, b *broker.Broker, h *Harness, c *clocktest.Manual) {
			b.ModelBegin("a")
			c.Advance(time.Second)
			d := b.Tick()
			r := b.ToolBegin("a") // arrives before the actuator froze
			rec := mustApply(t, ctx, b, h, d)
			if rec.Confirmed {
				t.Error("suspension confirmed despite a tool call")
			}
			mustApply(t, ctx, b, h, r)
		}, "freeze thaw"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := &fakeGroup{pids: []int{10, 11}}
			c := clocktest.NewManual(time.Unix(100, 0))
			b := broker.New(broker.Options{Clock: c})
			h := New(g, fakePager{g}, nil)
			tt.run(t, context.Background(), b, h, c)
			if got := strings.Join(g.log, " "); got != tt.want {
				t.Errorf("calls %q, want %q", got, tt.want)
			}
		})
	}
}

func mustApply(t *testing.T, ctx context.Context, b *broker.Broker, h *Harness, d broker.Decision) Record {
	t.Helper()
	rec, err := h.Apply(ctx, b, d)
	if err != nil {
		t.Fatalf("Apply(%v): %v", d.Action, err)
	}
	return rec
}

func TestWatchSuspendsAfterGrace(t *testing.T) {
	g := &fakeGroup{pids: []int{1}}
	b := broker.New(broker.Options{Grace: 30 * time.Millisecond})
	h := New(g, fakePager{g}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	got := make(chan Record, 1)
	go Watch(ctx, b, h, 5*time.Millisecond, func(r Record, err error) { got <- r })
	start := time.Now()
	b.ModelBegin("a")
	select {
	case r := <-got:
		if !r.Confirmed || time.Since(start) < 30*time.Millisecond {
			t.Errorf("record %+v after %v", r, time.Since(start))
		}
	case <-ctx.Done():
		t.Fatal("Watch never suspended an idle harness")
	}
	if h.Suspensions() != 1 {
		t.Errorf("%d suspensions", h.Suspensions())
	}
}
