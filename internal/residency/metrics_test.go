package residency

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"syscall"
	"testing"
)

// TestEventsCarryMetrics checks that each lifecycle event holds the
// counters including its own effect, and that events marshal to JSON with
// the error text.
func TestEventsCarryMetrics(t *testing.T) {
	ctx := context.Background()
	full := false
	e := newEnv(t, func(c *Config) {
		c.Capture.WrapFile = func(w io.Writer) io.Writer {
			return writerFunc(func(p []byte) (int, error) {
				if full {
					return 0, syscall.ENOSPC
				}
				return w.Write(p)
			})
		}
	})
	id, err := e.m.Ensure(ctx, info("a"))
	if err != nil {
		t.Fatal(err)
	}
	populate(t, e.host, id)
	e.host.mu.Lock()
	e.host.workingSet["a"] = 64 << 20
	e.host.mu.Unlock()
	if _, err := e.m.Boundary(ctx, "a", clean); err != nil {
		t.Fatal(err)
	}
	full = true
	if err := e.m.Teardown(ctx, "a"); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("teardown on a full disk: err = %v, want ENOSPC", err)
	}
	full = false
	if err := e.m.Teardown(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.m.Ensure(ctx, info("a")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		kind  EventKind
		check func(m Metrics) bool
	}{
		{"boundary", EventBoundary, func(m Metrics) bool { return m.Boundaries == 1 && m.RestartableBoundaries == 1 }},
		{"teardown failed", EventTeardownFailed, func(m Metrics) bool {
			return m.TeardownFailures == 1 && m.Teardowns == 0 && m.LifecycleOverhead > 0
		}},
		{"teardown", EventTeardown, func(m Metrics) bool {
			return m.Teardowns == 1 && m.BytesCaptured > 3<<20 && m.BytesState > 3<<20 && m.MemoryReclaimed == 64<<20
		}},
		{"rematerialize", EventRemat, func(m Metrics) bool { return m.Rematerializations == 1 && m.Teardowns == 1 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			evs := e.events.kinds(tc.kind)
			if len(evs) != 1 {
				t.Fatalf("%d %s events, want 1", len(evs), tc.kind)
			}
			if !tc.check(evs[0].Metrics) {
				t.Errorf("%s event metrics = %+v", tc.kind, evs[0].Metrics)
			}
			b, err := json.Marshal(evs[0])
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), `"kind":"`+string(tc.kind)+`"`) || !strings.Contains(string(b), `"metrics":{`) {
				t.Errorf("JSON %s lacks kind or metrics", b)
			}
			if tc.kind == EventTeardownFailed && !strings.Contains(string(b), "no space left") {
				t.Errorf("JSON %s lacks the error text", b)
			}
		})
	}
	if got, want := e.m.Metrics(), e.events.kinds(EventRemat)[0].Metrics; got != want {
		t.Errorf("Metrics() = %+v, last event says %+v", got, want)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
