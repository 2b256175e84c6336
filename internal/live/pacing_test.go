package live

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/sandbox"
	"github.com/tenon-dev/tenon/internal/sandbox/fake"
)

// fakePacer records what the pacing actuator asks of the pacer; it
// cannot pace the cgroups whose path has "bad" in it.
type fakePacer struct {
	gone    bool
	denyErr error
	denied  map[string]float64
	calls   []string
}

func (f *fakePacer) Deny(path string, rate float64) error {
	f.calls = append(f.calls, "deny")
	if f.denyErr != nil {
		return f.denyErr
	}
	if strings.Contains(path, "bad") {
		return errors.New("no such cgroup")
	}
	f.denied[path] = rate
	return nil
}

func (f *fakePacer) Allow(path string) error {
	f.calls = append(f.calls, "allow")
	delete(f.denied, path)
	return nil
}

func (f *fakePacer) Enabled() bool { return !f.gone }

func (f *fakePacer) Name() string { return "fake" }

type pacingRig struct {
	a     *pacingActuator
	pacer *fakePacer
	b     *fake.Backend
	now   time.Time
}

// newPacingRig has sandboxes sb-1 and sb-2 on the fake backend (cgroups
// "fake/sb-N") and bad-1, which the pacer cannot pace.
func newPacingRig(t *testing.T, handover time.Duration) *pacingRig {
	t.Helper()
	r := &pacingRig{pacer: &fakePacer{denied: map[string]float64{}}, b: fake.New(fake.Options{}), now: time.Unix(1000, 0)}
	for _, id := range []string{"sb-1", "sb-2", "bad-1"} {
		if _, err := r.b.Create(context.Background(), sandbox.Spec{ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	p := Pacing{Pacer: r.pacer, Rate: 0.1, Handover: handover}
	freezer := backendActuator{b: r.b, staller: func() controller.SandboxStaller { return nil }}
	r.a = newPacingActuator(p, r.b, freezer, func() time.Time { return r.now }, slog.New(slog.DiscardHandler))
	return r
}

func (r *pacingRig) paused(t *testing.T, id string) bool {
	t.Helper()
	info, err := r.b.Info(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return info.Paused
}

func TestPacingDenyAllow(t *testing.T) {
	r := newPacingRig(t, 0)
	ctx := context.Background()
	if err := r.a.Deny(ctx, "sb-1"); err != nil {
		t.Fatal(err)
	}
	if err := r.a.Deny(ctx, "sb-1"); err != nil { // a second deny changes nothing
		t.Fatal(err)
	}
	if r.pacer.denied["fake/sb-1"] != 0.1 || len(r.pacer.calls) != 1 {
		t.Errorf("pacer after two denies: denied %v, calls %v; want fake/sb-1 at 0.1 once", r.pacer.denied, r.pacer.calls)
	}
	if r.a.Name() != "fake" {
		t.Errorf("actuator named %q, want the pacer's name", r.a.Name())
	}
	if r.paused(t, "sb-1") {
		t.Error("a paced sandbox was frozen")
	}
	if err := r.a.Allow(ctx, "sb-1"); err != nil {
		t.Fatal(err)
	}
	if len(r.pacer.denied) != 0 || r.paused(t, "sb-1") {
		t.Errorf("after allow: pacer %v, paused %v", r.pacer.denied, r.paused(t, "sb-1"))
	}
	if err := r.a.Allow(ctx, "sb-2"); err != nil { // never denied
		t.Fatal(err)
	}
	if err := r.a.Deny(ctx, "gone"); err != nil {
		t.Errorf("denying a sandbox that is gone: %v", err)
	}
	if !slices.Equal(r.pacer.calls, []string{"deny", "allow"}) {
		t.Errorf("pacer calls %v", r.pacer.calls)
	}
}

// TestPacingHandover: a denial that lasts the handover time is frozen, and
// allow thaws it and releases the pace; with a negative handover it never
// is.
func TestPacingHandover(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name       string
		handover   time.Duration
		wait       time.Duration
		wantFrozen bool
	}{
		{"before", 5 * time.Second, 4900 * time.Millisecond, false},
		{"at", 5 * time.Second, 5 * time.Second, true},
		{"default", 0, DefaultHandover, true},
		{"never", -1, time.Hour, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newPacingRig(t, tt.handover)
			if err := r.a.Deny(ctx, "sb-1"); err != nil {
				t.Fatal(err)
			}
			r.now = r.now.Add(tt.wait)
			r.a.handover(ctx)
			if got := r.paused(t, "sb-1"); got != tt.wantFrozen {
				t.Fatalf("frozen after %v: %v, want %v", tt.wait, got, tt.wantFrozen)
			}
			if err := r.a.Allow(ctx, "sb-1"); err != nil {
				t.Fatal(err)
			}
			if r.paused(t, "sb-1") || len(r.pacer.denied) != 0 {
				t.Errorf("after allow: paused %v, pacer %v", r.paused(t, "sb-1"), r.pacer.denied)
			}
		})
	}
}

// TestPacingFallsBackToFreezer: with the scheduler gone, or a pacer that
// cannot pace the sandbox (no cgroup id, a failed map update), a denial
// freezes and allow thaws; paced sandboxes are frozen at the next
// handover once the scheduler is gone.
func TestPacingFallsBackToFreezer(t *testing.T) {
	ctx := context.Background()
	t.Run("cannot pace this cgroup", func(t *testing.T) {
		r := newPacingRig(t, -1)
		if err := r.a.Deny(ctx, "bad-1"); err != nil {
			t.Fatal(err)
		}
		if !r.paused(t, "bad-1") || len(r.pacer.denied) != 0 {
			t.Errorf("paused %v, paced %v; want frozen, not paced", r.paused(t, "bad-1"), r.pacer.denied)
		}
		if err := r.a.Allow(ctx, "bad-1"); err != nil || r.paused(t, "bad-1") {
			t.Errorf("allow: %v, paused %v", err, r.paused(t, "bad-1"))
		}
		if !slices.Equal(r.pacer.calls, []string{"deny"}) {
			t.Errorf("pacer calls %v: allow released a cgroup that was never paced", r.pacer.calls)
		}
	})
	t.Run("scheduler gone", func(t *testing.T) {
		r := newPacingRig(t, -1)
		if err := r.a.Deny(ctx, "sb-1"); err != nil {
			t.Fatal(err)
		}
		r.pacer.gone = true
		r.a.handover(ctx)
		if !r.paused(t, "sb-1") {
			t.Error("a paced sandbox was not frozen when the scheduler went")
		}
		if err := r.a.Deny(ctx, "sb-2"); err != nil {
			t.Fatal(err)
		}
		if !r.paused(t, "sb-2") || len(r.pacer.calls) != 1 {
			t.Errorf("deny without a scheduler: paused %v, pacer calls %v", r.paused(t, "sb-2"), r.pacer.calls)
		}
		for _, id := range []string{"sb-1", "sb-2"} {
			if err := r.a.Allow(ctx, id); err != nil || r.paused(t, id) {
				t.Errorf("allow %s: %v, paused %v", id, err, r.paused(t, id))
			}
		}
		if len(r.pacer.calls) != 1 {
			t.Errorf("the gone scheduler was called: %v", r.pacer.calls)
		}
	})
	t.Run("pacer error", func(t *testing.T) {
		r := newPacingRig(t, -1)
		r.pacer.denyErr = errors.New("map full")
		if err := r.a.Deny(ctx, "sb-1"); err != nil || !r.paused(t, "sb-1") {
			t.Fatalf("deny with a failing pacer: %v, paused %v; want frozen", err, r.paused(t, "sb-1"))
		}
		r.pacer.denyErr = nil
		if err := r.a.Allow(ctx, "sb-1"); err != nil || r.paused(t, "sb-1") {
			t.Fatalf("allow: %v, paused %v", err, r.paused(t, "sb-1"))
		}
		if err := r.a.Deny(ctx, "sb-1"); err != nil || r.pacer.denied["fake/sb-1"] == 0 || r.paused(t, "sb-1") {
			t.Errorf("deny again: %v, pacer %v, paused %v; want paced", err, r.pacer.denied, r.paused(t, "sb-1"))
		}
	})
}

// TestPacingStats: the actuator counts denials, handovers and denials
// frozen from the start, and splits the denied time into paced and frozen.
func TestPacingStats(t *testing.T) {
	ctx := context.Background()
	r := newPacingRig(t, 3*time.Second)
	for _, id := range []string{"sb-1", "bad-1"} { // paced; frozen from the start
		if err := r.a.Deny(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	r.now = r.now.Add(4 * time.Second)
	r.a.handover(ctx) // sb-1 frozen after 4 s paced
	r.now = r.now.Add(time.Second)
	for _, id := range []string{"sb-1", "bad-1"} {
		if err := r.a.Allow(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.a.Deny(ctx, "sb-2"); err != nil { // still denied: not counted in the times yet
		t.Fatal(err)
	}
	r.now = r.now.Add(time.Hour)
	want := PacingStats{Denials: 3, HandedOver: 1, FrozenOnly: 1, Paced: 4 * time.Second, Frozen: 6 * time.Second}
	if got := r.a.Stats(); got != want {
		t.Errorf("stats %+v, want %+v", got, want)
	}
}
