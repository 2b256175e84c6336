package live

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tenon-dev/tenon/internal/clock"
	"github.com/tenon-dev/tenon/internal/clock/clocktest"
	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/policy"
	"github.com/tenon-dev/tenon/internal/sandbox"
	"github.com/tenon-dev/tenon/internal/units"
)

// flakyHost is a tapeHost whose reads of a sandbox fail, once each, with
// the errors queued for it, and which counts its Resumes.
type flakyHost struct {
	*tapeHost
	fail    map[string][]error
	resumed map[string]int
}

func (h *flakyHost) Sample(ctx context.Context, id string, threads bool) (sandbox.Stats, error) {
	h.mu.Lock()
	if q := h.fail[id]; len(q) > 0 {
		h.fail[id] = q[1:]
		h.mu.Unlock()
		return sandbox.Stats{}, q[0]
	}
	h.mu.Unlock()
	return h.tapeHost.Sample(ctx, id, threads)
}

func (h *flakyHost) Resume(ctx context.Context, id string) error {
	h.mu.Lock()
	h.resumed[id]++
	h.mu.Unlock()
	return h.tapeHost.Resume(ctx, id)
}

// TestGateReadFailure: two sandboxes grow in red and the gate holds one
// back. A failed read of the held one that is not "gone" (a transient
// error) keeps it held, on its last sample, and says so once in an error
// event; reads failing for longer than staleReads periods, or a read
// saying the sandbox is gone, drop it and the gate lets it go.
func TestGateReadFailure(t *testing.T) {
	transient := errors.New("read memory.usage_in_bytes: interrupted system call")
	for _, c := range []struct {
		name     string
		errs     []error
		released bool
	}{
		{"transient", []error{transient}, false},
		{"transient, a few periods", []error{transient, transient, transient}, false},
		{"failing for good", func() []error {
			e := make([]error, staleReads+5)
			for i := range e {
				e[i] = transient
			}
			return e
		}(), true},
		{"gone", []error{fmt.Errorf("stats: %w", sandbox.ErrNotFound)}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := lookup(t, "gate", policy.Options{Budget: units.GiB})
				be := &flakyHost{tapeHost: &tapeHost{Manual: clocktest.NewManual(time.Time{}), paused: map[string]bool{},
					mem: map[string]int64{"sa": 100 * units.MiB, "sb": 100 * units.MiB}, cpu: map[string]time.Duration{},
					live: []string{"sa", "sb"}, avail: 64 * units.MiB}, fail: map[string][]error{}, resumed: map[string]int{}}
				var mu sync.Mutex
				var errs []string
				env := controller.Env{Clock: clock.Real{}, Budget: units.GiB, Domain: be, Backend: be, Live: be.liveSandboxes,
					Emit: func(e controller.Event) {
						if e.Kind == controller.EventError {
							mu.Lock()
							errs = append(errs, e.Sandbox+": "+e.Error)
							mu.Unlock()
						}
					}}
				if err := p.Start(t.Context(), env); err != nil {
					t.Fatal(err)
				}
				grow := func(periods int) {
					for range periods {
						be.mu.Lock()
						for id := range be.mem {
							if !be.paused[id] {
								be.mem[id] += 8 * units.MiB
							}
						}
						be.mu.Unlock()
						time.Sleep(p.Machine().Config().GateConfig.Period)
						synctest.Wait()
					}
				}
				grow(5)
				var held string
				be.mu.Lock()
				for id, paused := range be.paused {
					if paused {
						held = id
					}
				}
				resumedBefore := be.resumed[held]
				be.fail[held] = c.errs
				be.mu.Unlock()
				if held == "" {
					t.Fatal("the gate held neither sandbox back in red")
				}
				grow(len(c.errs) + 2)
				be.mu.Lock()
				released := be.resumed[held] > resumedBefore
				be.mu.Unlock()
				if released != c.released {
					t.Errorf("held sandbox %s resumed %v after its reads failed (%d), want %v", held, released, len(c.errs), c.released)
				}
				if err := p.Stop(t.Context()); err != nil {
					t.Fatal(err)
				}
				mu.Lock()
				defer mu.Unlock()
				if want := map[bool]int{true: 0, false: 1}[errors.Is(c.errs[0], sandbox.ErrNotFound)]; len(errs) != want {
					t.Errorf("error events %q, want %d", errs, want)
				}
			})
		})
	}
}
