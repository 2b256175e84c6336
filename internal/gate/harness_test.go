package gate

import (
	"slices"
	"testing"
	"time"
)

// harness simulates sandboxes under freezer semantics: an allowed sandbox
// burns CPU and grows at its rate; a denied one stands still.
type harness struct {
	t       *testing.T
	c       *Controller
	now     time.Time
	budget  int64
	avail   int64
	sb      map[string]*simSandbox
	allowed map[string]bool
	last    Decision
}

type simSandbox struct {
	foot    int64
	cpu     time.Duration
	rate    float64 // bytes per second while running
	done    bool
	idle    bool // running but burning no CPU
	trickle bool // keeps 1% of its CPU and growth while denied (cpu-quota actuator)
}

const testBudget = 4096 * MiB // red < 512 MiB, yellow < 1024 MiB

func newHarness(t *testing.T, cfg Config) *harness {
	t.Helper()
	return &harness{
		t: t, c: New(cfg), now: time.Unix(1_700_000_000, 0), budget: testBudget, avail: testBudget,
		sb: map[string]*simSandbox{}, allowed: map[string]bool{},
	}
}

func (h *harness) add(id string, rate float64) { h.sb[id] = &simSandbox{foot: 50 * MiB, rate: rate} }

// step advances the clock by dt, runs the sandboxes under the last decision,
// and steps the controller.
func (h *harness) step(dt time.Duration) Decision {
	h.t.Helper()
	h.now = h.now.Add(dt)
	obs := Observation{Budget: h.budget, Available: h.avail}
	ids := make([]string, 0, len(h.sb))
	for id := range h.sb {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		s := h.sb[id]
		if h.allowed[id] && !s.idle {
			s.foot += int64(s.rate * dt.Seconds())
			s.cpu += dt / 2
		} else if s.trickle {
			s.foot += int64(s.rate * dt.Seconds() / 100)
			s.cpu += dt / 200
		}
		obs.Sandboxes = append(obs.Sandboxes, Sample{ID: id, Footprint: s.foot, CPU: s.cpu, Done: s.done})
		if s.done {
			delete(h.sb, id)
		}
	}
	d := h.c.Step(h.now, obs)
	h.allowed = map[string]bool{}
	for _, id := range d.Permitted {
		h.allowed[id] = true
	}
	h.last = d
	return d
}

// warm runs n green iterations so every sandbox gets a valid estimate.
func (h *harness) warm(n int) Decision {
	h.t.Helper()
	saved := h.avail
	h.avail = h.budget
	var d Decision
	for range n {
		d = h.step(100 * time.Millisecond)
	}
	h.avail = saved
	return d
}

func sbOf(t *testing.T, d Decision, id string) SandboxDecision {
	t.Helper()
	for _, s := range d.Sandboxes {
		if s.ID == id {
			return s
		}
	}
	t.Fatalf("sandbox %s not in decision (have %v)", id, d.Sandboxes)
	return SandboxDecision{}
}

func hasEvent(d Decision, kind EventKind, id string) bool {
	for _, e := range d.Events {
		if e.Kind == kind && e.Sandbox == id {
			return true
		}
	}
	return false
}

// table5 turns off the extensions that reorder candidates or change their
// demand (seniority, resident zero, rest decay), for tests of Table 5's rules as
// written; the other extensions leave those rules' cases unchanged.
func table5(cfg Config) Config {
	cfg.NoSeniority, cfg.NoResidentZero, cfg.NoRestDecay = true, true, true
	return cfg
}
