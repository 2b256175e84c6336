package gate

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"
)

const tick = 100 * time.Millisecond

func TestNewSandboxInitiallyDenied(t *testing.T) {
	t.Run("first decision allow is a permission change", func(t *testing.T) {
		h := newHarness(t, table5(Config{}))
		h.add("a", 100*MiB)
		d := h.step(tick)
		s := sbOf(t, d, "a")
		if !s.Allowed || !s.Changed || s.State != Growing || s.Estimated || s.Demand != 16*MiB {
			t.Errorf("first green decision = %+v, want allowed, changed, growing, bootstrap 16 MiB", s)
		}
		if !hasEvent(d, EventRegistered, "a") || !hasEvent(d, EventAllow, "a") {
			t.Errorf("events = %+v, want registered and allow", d.Events)
		}
	})
	t.Run("first decision deny starts the timer without a change", func(t *testing.T) {
		h := newHarness(t, table5(Config{}))
		h.avail = 900 * MiB // yellow, b = 1
		h.add("a", 100*MiB)
		h.add("b", 100*MiB)
		d := h.step(tick)
		if d.Pressure != Yellow || !slices.Equal(d.Permitted, []string{"a"}) {
			t.Fatalf("pressure %v permitted %v, want yellow [a]", d.Pressure, d.Permitted)
		}
		s := sbOf(t, d, "b")
		if s.Allowed || s.Changed || !s.DeniedSince.Equal(h.now) || s.State != PausedGrowing {
			t.Errorf("b = %+v, want denied, unchanged, timer at now, paused-growing", s)
		}
		if !hasEvent(d, EventDeny, "b") {
			t.Errorf("no deny event for b in %+v", d.Events)
		}
	})
}

func TestEstimatesThroughController(t *testing.T) {
	t.Run("bootstrap until first valid interval then ewma init", func(t *testing.T) {
		h := newHarness(t, table5(Config{}))
		h.add("a", 100*MiB)
		h.step(tick) // registration; publishes allow (a permission change)
		d := h.step(tick)
		if s := sbOf(t, d, "a"); s.Estimated || s.Demand != 16*MiB {
			t.Fatalf("after the permission-change interval: %+v, want no estimate, bootstrap demand", s)
		}
		d = h.step(tick)
		if s := sbOf(t, d, "a"); !s.Estimated || !approx(s.Rate, 100*MiB) || s.Demand != 100*MiB {
			t.Fatalf("after first valid interval: %+v, want rate 100 MiB/s, demand 100 MiB", s)
		}
	})
	t.Run("bootstrap demand is configurable", func(t *testing.T) {
		h := newHarness(t, table5(Config{BootstrapDemand: 32 * MiB}))
		h.add("a", 0)
		if s := sbOf(t, h.step(tick), "a"); s.Demand != 32*MiB {
			t.Errorf("demand = %d, want 32 MiB", s.Demand)
		}
	})
	t.Run("permission change interval ignored", func(t *testing.T) {
		h := newHarness(t, table5(Config{NoFastAttack: true})) // the EWMA step of Table 5
		h.add("a", 50*MiB)
		h.add("b", 100*MiB)
		h.warm(3)
		h.avail = 300 * MiB // red, H = 44 MiB: both denied
		d := h.step(tick)
		if !slices.Equal(d.Denied, []string{"a", "b"}) {
			t.Fatalf("denied = %v, want [a b]", d.Denied)
		}
		h.sb["a"].rate = 500 * MiB
		h.avail = h.budget
		h.step(tick)     // green: allow published
		d = h.step(tick) // a ran at 500 MiB/s in an interval with a permission change
		if s := sbOf(t, d, "a"); !approx(s.Rate, 50*MiB) {
			t.Fatalf("rate after change interval = %v MiB/s, want 50 (interval ignored)", s.Rate/MiB)
		}
		d = h.step(tick)
		if s := sbOf(t, d, "a"); !approx(s.Rate, 0.35*500*MiB+0.65*50*MiB) {
			t.Errorf("rate after valid interval = %v MiB/s, want 207.5", s.Rate/MiB)
		}
	})
	t.Run("no cpu increase interval ignored", func(t *testing.T) {
		h := newHarness(t, table5(Config{}))
		h.add("a", 100*MiB)
		h.warm(4)
		h.sb["a"].idle = true
		h.sb["a"].foot -= 40 * MiB // shrinks without running: no evidence of reduced growth
		d := h.step(tick)
		if s := sbOf(t, d, "a"); !approx(s.Rate, 100*MiB) || s.State != Growing {
			t.Errorf("after idle interval: %+v, want rate 100 MiB/s, growing", s)
		}
	})
	t.Run("baseline refreshed while denied", func(t *testing.T) {
		h := newHarness(t, table5(Config{}))
		h.add("a", 100*MiB)
		h.warm(4)
		h.avail = 300 * MiB // red, H = 44 MiB < 100 MiB demand
		for range 5 {
			if d := h.step(tick); !slices.Equal(d.Denied, []string{"a"}) {
				t.Fatalf("denied = %v, want [a]", d.Denied)
			}
			h.sb["a"].foot += 60 * MiB // footprint moves while denied
		}
		h.avail = h.budget
		h.step(tick) // green: publishes allow
		h.step(tick) // interval with the permission change: ignored
		d := h.step(tick)
		if s := sbOf(t, d, "a"); !approx(s.Rate, 100*MiB) {
			t.Errorf("rate = %v MiB/s, want 100: the first valid interval spans one period", s.Rate/MiB)
		}
	})
	t.Run("denied sandbox with valid samples stays paused-growing", func(t *testing.T) {
		h := newHarness(t, table5(Config{}))
		h.add("a", 100*MiB)
		h.sb["a"].trickle = true
		h.warm(4)
		h.avail = 300 * MiB // red, H = 44 MiB
		d := h.step(tick)
		if !hasEvent(d, EventPause, "a") {
			t.Fatalf("events %+v, want pause for a", d.Events)
		}
		for range 3 {
			d = h.step(tick)
			s := sbOf(t, d, "a")
			if s.State != PausedGrowing || hasEvent(d, EventPause, "a") {
				t.Fatalf("a = %+v events %+v, want paused-growing without a repeated pause event", s, d.Events)
			}
		}
		if s := sbOf(t, d, "a"); s.Rate >= 100*MiB {
			t.Errorf("rate %v MiB/s, want lowered by the valid throttled intervals", s.Rate/MiB)
		}
	})
	t.Run("state labels with resident band", func(t *testing.T) {
		h := newHarness(t, table5(Config{}))
		h.add("grow", 100*MiB)
		h.add("flat", 0)
		h.add("inband", 3*MiB)
		h.add("cool", -10*MiB)
		d := h.warm(3)
		want := map[string]State{"grow": Growing, "flat": Resident, "inband": Resident, "cool": Cooling}
		for id, st := range want {
			if s := sbOf(t, d, id); s.State != st {
				t.Errorf("%s state = %v, want %v", id, s.State, st)
			}
		}
		if s := sbOf(t, d, "inband"); s.Demand <= 0 {
			t.Errorf("in-band positive rate demand = %d, want > 0", s.Demand)
		}
		if s := sbOf(t, d, "cool"); s.Demand != 0 {
			t.Errorf("cooling demand = %d, want 0", s.Demand)
		}
	})
}

func TestSelection(t *testing.T) {
	t.Run("green allows every live sandbox, even inside dmin", func(t *testing.T) {
		h := newHarness(t, table5(Config{}))
		h.add("a", 100*MiB)
		h.add("b", 200*MiB)
		h.warm(3)
		h.avail = 300 * MiB
		if d := h.step(tick); len(d.Denied) != 2 {
			t.Fatalf("red: denied %v, want both", d.Denied)
		}
		h.avail = h.budget
		d := h.step(tick)
		if d.Pressure != Green || len(d.Permitted) != 2 {
			t.Errorf("green: %v permitted %v, want both", d.Pressure, d.Permitted)
		}
	})
	t.Run("yellow permits K = b positive-demand sandboxes", func(t *testing.T) {
		h := newHarness(t, table5(Config{}))
		for i, id := range []string{"d", "c", "b", "a"} {
			h.add(id, float64(130-10*i)*MiB) // a 100, b 110, c 120, d 130 MiB/s
		}
		h.warm(151) // 15 s of green: b = 4
		if h.c.B() != 4 {
			t.Fatalf("b after 15 s green = %d, want 4", h.c.B())
		}
		h.avail = 1400 * MiB // R_prev 460 MiB: projected 940 MiB, yellow
		d := h.step(tick)
		if d.Pressure != Yellow || d.B != 2 || !slices.Equal(d.Permitted, []string{"a", "b"}) {
			t.Errorf("got %v b=%d permitted %v, want yellow b=2 [a b]", d.Pressure, d.B, d.Permitted)
		}
	})
	t.Run("yellow aggregate demand bounded by headroom", func(t *testing.T) {
		h := newHarness(t, table5(Config{SafetyMargin: 1250 * MiB}))
		for i, id := range []string{"d", "c", "b", "a"} {
			h.add(id, float64(130-10*i)*MiB)
		}
		h.warm(151)
		h.avail = 1400 * MiB // yellow, H = 150 MiB
		d := h.step(tick)
		if d.Pressure != Yellow || d.B != 2 || d.Headroom != 150*MiB || !slices.Equal(d.Permitted, []string{"a"}) {
			t.Errorf("got %v b=%d H=%d MiB permitted %v, want yellow b=2 H=150 [a]", d.Pressure, d.B, d.Headroom/MiB, d.Permitted)
		}
	})
	t.Run("red probe admits one positive-demand sandbox and every zero-demand one", func(t *testing.T) {
		h := newHarness(t, table5(Config{}))
		h.add("r1", 0)
		h.add("r2", 0)
		h.add("c1", -10*MiB)
		h.add("g1", 100*MiB)
		h.add("g2", 120*MiB)
		h.warm(3)
		h.avail = 600 * MiB // R_prev 220: projected 380, red; H = 344 MiB
		d := h.step(tick)
		if d.Pressure != Red || !slices.Equal(d.Permitted, []string{"c1", "g1", "r1", "r2"}) {
			t.Errorf("got %v permitted %v, want red [c1 g1 r1 r2]", d.Pressure, d.Permitted)
		}
	})
	t.Run("red probe demand must fit headroom", func(t *testing.T) {
		h := newHarness(t, table5(Config{}))
		h.add("r1", 0)
		h.add("g1", 100*MiB)
		h.add("g2", 120*MiB)
		h.warm(3)
		h.avail = 300 * MiB // red, H = 44 MiB
		d := h.step(tick)
		if d.Pressure != Red || !slices.Equal(d.Permitted, []string{"r1"}) {
			t.Errorf("got %v permitted %v, want red [r1]", d.Pressure, d.Permitted)
		}
	})
	t.Run("rprev counts previously permitted live sandboxes", func(t *testing.T) {
		h := newHarness(t, table5(Config{}))
		h.add("x", 100*MiB)
		h.add("y", 50*MiB)
		h.warm(3)
		h.avail = 900 * MiB
		d := h.step(tick)
		if d.RPrev != 150*MiB || !slices.Equal(d.Permitted, []string{"y"}) {
			t.Fatalf("R_prev = %d MiB permitted %v, want 150 MiB [y]", d.RPrev/MiB, d.Permitted)
		}
		d = h.step(tick)
		if d.RPrev != 50*MiB {
			t.Errorf("R_prev = %d MiB, want 50 (only y was permitted)", d.RPrev/MiB)
		}
	})
}

// yellowPair sets up x (100 MiB/s) and y (50 MiB/s) in steady yellow with
// b = 1: y holds the slot and x was denied at the returned time.
func yellowPair(t *testing.T) (*harness, time.Time) {
	h := newHarness(t, table5(Config{}))
	h.add("x", 100*MiB)
	h.add("y", 50*MiB)
	h.warm(3)
	h.avail = 900 * MiB // projected 750 then 850 MiB: yellow; H = 644 MiB
	d := h.step(tick)
	if d.Pressure != Yellow || !slices.Equal(d.Denied, []string{"x"}) {
		t.Fatalf("setup: %v denied %v, want yellow [x]", d.Pressure, d.Denied)
	}
	return h, h.now
}

func TestDenialTimers(t *testing.T) {
	t.Run("dmin: denied sandbox not eligible before 1000 ms", func(t *testing.T) {
		h, denied := yellowPair(t)
		h.sb["y"].done = true
		for h.now.Sub(denied) < 900*time.Millisecond {
			if d := h.step(tick); d.Pressure != Yellow || len(d.Permitted) != 0 {
				t.Fatalf("at +%v: %v permitted %v, want yellow and x still waiting", h.now.Sub(denied), d.Pressure, d.Permitted)
			}
		}
		d := h.step(tick) // +1000 ms
		if !slices.Equal(d.Permitted, []string{"x"}) {
			t.Errorf("at +%v permitted %v, want [x]", h.now.Sub(denied), d.Permitted)
		}
	})
	t.Run("dmin: green overrides", func(t *testing.T) {
		h, _ := yellowPair(t)
		h.avail = h.budget
		if d := h.step(tick); !slices.Equal(d.Permitted, []string{"x", "y"}) {
			t.Errorf("permitted %v, want [x y]", d.Permitted)
		}
	})
	t.Run("starvation bound: overdue after dmax is checked first", func(t *testing.T) {
		h, denied := yellowPair(t)
		var d Decision
		for {
			d = h.step(tick)
			if slices.Contains(d.Permitted, "x") {
				break
			}
			if s := sbOf(t, d, "x"); !s.DeniedSince.Equal(denied) {
				t.Fatalf("timer moved to %v, want retained at %v", s.DeniedSince, denied)
			}
			if h.now.Sub(denied) > 5*time.Second {
				t.Fatal("x starved past dmax")
			}
		}
		if got := h.now.Sub(denied); got != 3*time.Second {
			t.Errorf("x admitted after %v, want exactly dmax = 3s", got)
		}
		if !slices.Equal(d.Denied, []string{"y"}) {
			t.Errorf("denied %v, want [y] (one slot, overdue x first)", d.Denied)
		}
		if s := sbOf(t, d, "x"); !s.DeniedSince.IsZero() || s.Overdue {
			t.Errorf("allowed x = %+v, want timer cleared", s)
		}
	})
	t.Run("completed sandbox removed and its timer discarded", func(t *testing.T) {
		h, _ := yellowPair(t)
		h.sb["x"].done = true
		d := h.step(tick)
		if !hasEvent(d, EventRemoved, "x") || slices.Contains(d.Denied, "x") || len(d.Sandboxes) != 1 {
			t.Fatalf("decision %+v, want x removed", d)
		}
		h.add("x", 100*MiB) // same ID again, inside the old dmin window
		d = h.step(tick)
		s := sbOf(t, d, "x")
		// Fresh: no estimate, bootstrap demand, and no timer carried over:
		// either allowed, or (y holds the one slot, sticky) denied with a
		// new denial episode starting now.
		if !hasEvent(d, EventRegistered, "x") || s.Estimated || s.Demand != 16*MiB || !(s.Allowed || s.DeniedSince.Equal(d.Time)) {
			t.Errorf("re-registered x = %+v, want fresh: no estimate, bootstrap demand, no old timer", s)
		}
	})
	t.Run("vanished sandbox removed", func(t *testing.T) {
		h, _ := yellowPair(t)
		delete(h.sb, "x")
		d := h.step(tick)
		if !hasEvent(d, EventRemoved, "x") || len(d.Sandboxes) != 1 {
			t.Errorf("decision %+v, want x removed", d)
		}
	})
}

func TestCandidateOrder(t *testing.T) {
	now := time.Unix(5000, 0)
	at := func(ms int) time.Time { return now.Add(-time.Duration(ms) * time.Millisecond) }
	cfg := DefaultConfig()
	entries := []*entry{
		{id: "grow-small", state: Growing, demand: 10},
		{id: "paused-smaller", state: PausedGrowing, demand: 5, timerSet: true, deniedSince: at(1500)},
		{id: "cool", state: Cooling, demand: 0},
		{id: "res-b", state: Resident, demand: 3},
		{id: "res-a", state: Resident, demand: 3},
		{id: "res-zero", state: Resident, demand: 0},
		{id: "overdue-late", state: Growing, demand: 1, timerSet: true, deniedSince: at(3000)},
		{id: "overdue-early", state: Growing, demand: 900, timerSet: true, deniedSince: at(4000)},
	}
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(entries), func(i, j int) { entries[i], entries[j] = entries[j], entries[i] })
	for _, e := range entries {
		e.overdue = e.timerSet && now.Sub(e.deniedSince) >= cfg.DMax
		e.rank = e.state.rank()
	}
	slices.SortFunc(entries, candidateOrder)
	var got []string
	for _, e := range entries {
		got = append(got, e.id)
	}
	want := []string{"overdue-early", "overdue-late", "res-zero", "res-a", "res-b", "cool", "paused-smaller", "grow-small"}
	if !slices.Equal(got, want) {
		t.Errorf("order = %v\nwant    %v", got, want)
	}
}

func TestStepDeterministic(t *testing.T) {
	mk := func() Observation {
		obs := Observation{Budget: testBudget, Available: 900 * MiB}
		for i := range 50 {
			obs.Sandboxes = append(obs.Sandboxes, Sample{ID: string(rune('A'+i%26)) + string(rune('a'+i/26)),
				Footprint: int64(i) * MiB, CPU: time.Duration(i)})
		}
		return obs
	}
	t0 := time.Unix(1000, 0)
	a, b := New(Config{}), New(Config{})
	for k := range 5 {
		oa, ob := mk(), mk()
		for i := range oa.Sandboxes {
			oa.Sandboxes[i].Footprint += int64(k*i) * MiB
			oa.Sandboxes[i].CPU += time.Duration(k+1) * time.Second
		}
		copy(ob.Sandboxes, oa.Sandboxes)
		rand.New(rand.NewPCG(uint64(k), 7)).Shuffle(len(ob.Sandboxes), func(i, j int) {
			ob.Sandboxes[i], ob.Sandboxes[j] = ob.Sandboxes[j], ob.Sandboxes[i]
		})
		now := t0.Add(time.Duration(k) * tick)
		da, db := a.Step(now, oa), b.Step(now, ob)
		if !reflect.DeepEqual(da, db) {
			t.Fatalf("iteration %d: decisions differ with sample order", k)
		}
	}
}
