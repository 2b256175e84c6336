package residency

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/clock/clocktest"
	"github.com/tenon-dev/tenon/internal/policy"
)

// TestWaitBeginDrivesReclaim steps a manual clock through a daemon's
// model waits in green: a boundary with no predicted wait keeps the
// sandbox; a wait announced with a predicted length that amortizes the
// page-in pages it out (a sandbox that is not restart-safe); one too short
// does not; Prefetch at the end of the wait pages it back in.
func TestWaitBeginDrivesReclaim(t *testing.T) {
	tests := []struct {
		name      string
		predicted time.Duration
		elapsed   time.Duration // clock advance between the wait's begin and Tick
		wantPage  bool
	}{
		{name: "long wait", predicted: 10 * time.Second, wantPage: true},
		{name: "unknown wait", predicted: 0},
		{name: "short wait", predicted: 100 * time.Millisecond},
		{name: "wait mostly over", predicted: 10 * time.Second, elapsed: 9900 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := clocktest.NewManual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			e, p := pagingEnv(t, func(c *Config) { c.Clock = clk })
			boundary := clean
			boundary.PredictedWait = 0
			ctx := context.Background()
			e.host.workingSet["a"] = 300 << 20
			id, err := e.m.Ensure(ctx, info("a"))
			if err != nil {
				t.Fatal(err)
			}
			e.host.procs["a"] = []ProcInfo{{PID: 42, Comm: "server"}}
			if _, err := e.m.Boundary(ctx, "a", boundary); err != nil {
				t.Fatal(err)
			}
			if ds := e.m.Tick(); len(ds) != 0 {
				t.Fatalf("green, wait unknown: decisions %+v, want none", ds)
			}
			clk.Advance(30 * time.Second) // the harness parses output, then calls the model
			if !e.m.WaitBegin("a", tt.predicted) {
				t.Fatal("WaitBegin on an idle resident agent = false")
			}
			clk.Advance(tt.elapsed)
			ds := e.m.Tick()
			e.m.Wait()
			if got := len(ds) == 1 && ds[0].Kind == policy.ReclaimPageOut; got != tt.wantPage || !tt.wantPage && len(ds) != 0 {
				t.Fatalf("decisions %+v, want page-out %v", ds, tt.wantPage)
			}
			if e.m.PagedOut("a") != tt.wantPage || p.isFrozen(id) != tt.wantPage {
				t.Fatalf("PagedOut %v frozen %v, want %v", e.m.PagedOut("a"), p.isFrozen(id), tt.wantPage)
			}
			started := e.m.Prefetch("a")
			e.m.Wait()
			if started != tt.wantPage || e.m.PagedOut("a") || p.isFrozen(id) {
				t.Errorf("Prefetch started %v, after it paged out %v frozen %v", started, e.m.PagedOut("a"), p.isFrozen(id))
			}
			want := []string(nil)
			if tt.wantPage {
				want = []string{"out " + id, "in " + id}
				if evs := e.events.kinds(EventPageIn); len(evs) != 1 || evs[0].Reason != "prefetch" {
					t.Errorf("page_in events = %+v, want one prefetch", evs)
				}
			}
			if got := p.callLog(); !reflect.DeepEqual(got, want) {
				t.Errorf("host calls = %v, want %v", got, want)
			}
		})
	}
}

func TestWaitBeginIgnoresBusyAndUnknown(t *testing.T) {
	e, _ := pagingEnv(t, nil)
	if e.m.WaitBegin("nobody", time.Minute) {
		t.Error("WaitBegin on an unknown agent = true")
	}
	if _, err := e.m.Ensure(context.Background(), info("a")); err != nil {
		t.Fatal(err)
	}
	if e.m.WaitBegin("a", time.Minute) {
		t.Error("WaitBegin during an action (Ensure without Boundary) = true")
	}
}
