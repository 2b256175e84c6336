package policy

import (
	"slices"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/gate"
)

// TestFreezingHold steps a gate machine with the freezing hold (the v2 OOM
// hold) period by period over fake observations: the domain's flags and
// three sandboxes' footprints and CPU times.
func TestFreezingHold(t *testing.T) {
	const mib = 1 << 20
	const budget = 1024 * mib // large enough that the gate itself allows all three
	t0 := time.Unix(1000, 0)
	type period struct {
		ms           int
		under, above bool
		mem          [3]int64 // a, b, c footprints in MiB (0: gone)
		cpu          [3]int   // their CPU times, ms
		hold         HoldAction
		frozen       []string // held after the step, oldest first
	}
	for _, tc := range []struct {
		name    string
		periods []period
		froze   uint64
	}{
		{name: "growers racing past the line are all frozen; idle ones are not", periods: []period{
			{0, false, false, [3]int64{10, 10, 10}, [3]int{0, 0, 0}, HoldNone, nil},
			{100, false, true, [3]int64{40, 40, 10}, [3]int{50, 50, 0}, HoldNone, nil},
			{200, true, true, [3]int64{60, 70, 10}, [3]int{60, 60, 0}, HoldBegan, []string{"a", "b"}},
			// Frozen: no stall, no growth, still above the line: held.
			{300, false, true, [3]int64{60, 70, 10}, [3]int{60, 60, 0}, HoldNone, []string{"a", "b"}},
		}, froze: 2},
		{name: "thawed one a period, oldest first, once below the line; resolved when none is held", periods: []period{
			{0, false, false, [3]int64{10, 10, 10}, [3]int{0, 0, 0}, HoldNone, nil},
			{100, true, true, [3]int64{60, 70, 10}, [3]int{50, 50, 0}, HoldBegan, []string{"a", "b"}},
			{200, false, true, [3]int64{60, 70, 10}, [3]int{50, 50, 40}, HoldNone, []string{"a", "b"}},
			{300, false, false, [3]int64{60, 70, 0}, [3]int{50, 50, 0}, HoldNone, []string{"b"}},
			// a grows past the line again: frozen again, behind b.
			{400, true, true, [3]int64{66, 70, 0}, [3]int{60, 50, 0}, HoldNone, []string{"b", "a"}},
			{500, false, false, [3]int64{66, 70, 0}, [3]int{60, 50, 0}, HoldNone, []string{"a"}},
			{600, false, false, [3]int64{66, 70, 0}, [3]int{60, 80, 0}, HoldNone, nil},
			{700, false, false, [3]int64{66, 70, 0}, [3]int{60, 80, 0}, HoldResolved, nil},
		}, froze: 3},
		{name: "nothing progressing: released at the timeout, every held sandbox thawed", periods: []period{
			{0, false, false, [3]int64{10, 10, 10}, [3]int{0, 0, 0}, HoldNone, nil},
			{100, true, true, [3]int64{60, 70, 20}, [3]int{50, 50, 50}, HoldBegan, []string{"a", "b", "c"}},
			{1000, false, true, [3]int64{60, 70, 20}, [3]int{50, 50, 50}, HoldNone, []string{"a", "b", "c"}},
			{3100, false, true, [3]int64{60, 70, 20}, [3]int{50, 50, 50}, HoldRelease, nil},
			// Released: growth above the line is the OOM killer's.
			{3200, true, true, [3]int64{70, 80, 20}, [3]int{60, 60, 50}, HoldNone, nil},
			{3300, false, false, [3]int64{0, 80, 20}, [3]int{0, 60, 50}, HoldRearm, nil},
		}, froze: 3},
		{name: "below the line a stall freezes nothing", periods: []period{
			{0, false, false, [3]int64{10, 10, 10}, [3]int{0, 0, 0}, HoldNone, nil},
			{100, false, false, [3]int64{60, 70, 20}, [3]int{50, 50, 50}, HoldNone, nil},
		}},
		{name: "growth under the charge batch is not an allocator", periods: []period{
			{0, false, false, [3]int64{10, 10, 10}, [3]int{0, 0, 0}, HoldNone, nil},
			{100, true, true, [3]int64{10, 30, 10}, [3]int{0, 50, 0}, HoldBegan, []string{"b"}},
		}, froze: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := NewMachine(Config{Spec: Spec{Name: "gate", Gate: true}, Budget: budget, Hold: 3 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			m.SetHoldFreeze()
			for i, p := range tc.periods {
				var smp []gate.Sample
				var used int64
				for j, id := range []string{"a", "b", "c"} {
					if p.mem[j] == 0 {
						continue
					}
					smp = append(smp, gate.Sample{ID: id, Footprint: p.mem[j] * mib, CPU: time.Duration(p.cpu[j]) * time.Millisecond})
					used += p.mem[j] * mib
				}
				st := m.Sample(t0.Add(time.Duration(p.ms)*time.Millisecond), Observation{
					Available: budget - used, Sandboxes: smp, UnderOOM: p.under, AboveHoldLine: p.above})
				if st.Hold != p.hold || !slices.Equal(st.HoldFrozen, p.frozen) {
					t.Fatalf("period %d (t=%dms): hold %v, frozen %v; want %v, %v", i, p.ms, st.Hold, st.HoldFrozen, p.hold, p.frozen)
				}
				for _, sd := range st.Gate.Sandboxes {
					if held := slices.Contains(p.frozen, sd.ID); sd.Allowed == held {
						t.Errorf("period %d: %s allowed %v, held %v: a held sandbox must be denied, the others allowed (the gate is green)", i, sd.ID, sd.Allowed, held)
					}
					if slices.Contains(st.Gate.Permitted, sd.ID) != sd.Allowed || slices.Contains(st.Gate.Denied, sd.ID) == sd.Allowed {
						t.Errorf("period %d: %s: permitted %v, denied %v, allowed %v", i, sd.ID, st.Gate.Permitted, st.Gate.Denied, sd.Allowed)
					}
				}
			}
			if got := m.HoldStats().Froze; got != tc.froze {
				t.Errorf("froze %d sandboxes, want %d", got, tc.froze)
			}
		})
	}
}

// TestFreezingHoldOff: without SetHoldFreeze (v1's hold, which stops
// allocators itself) the machine freezes nothing.
func TestFreezingHoldOff(t *testing.T) {
	m, err := NewMachine(Config{Spec: Spec{Name: "gate", Gate: true}, Budget: 1 << 30, Hold: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1000, 0)
	m.Sample(t0, Observation{Available: 1 << 29, Sandboxes: []gate.Sample{{ID: "a", Footprint: 1 << 20}}})
	st := m.Sample(t0.Add(100*time.Millisecond), Observation{Available: 1 << 28, UnderOOM: true, AboveHoldLine: true,
		Sandboxes: []gate.Sample{{ID: "a", Footprint: 200 << 20, CPU: time.Second}}})
	if st.Hold != HoldBegan || len(st.HoldFrozen) != 0 || m.HoldStats().Froze != 0 {
		t.Errorf("hold %v, frozen %v, froze %d; want began, none, 0", st.Hold, st.HoldFrozen, m.HoldStats().Froze)
	}
	m.DisableHold()
	m.SetHoldFreeze()
	if st := m.Sample(t0.Add(200*time.Millisecond), Observation{UnderOOM: true}); st.Hold != HoldNone || st.HoldFrozen != nil {
		t.Errorf("a machine without the hold: %+v", st)
	}
}

// TestWantsThreads: a machine wants the sandboxes' blocked threads read
// only with the OOM hold armed and the domain under OOM, above the hold
// line, or the hold waiting (v1), or holding sandboxes frozen (v2).
func TestWantsThreads(t *testing.T) {
	const mib = 1 << 20
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	smp := func(mem int64, cpuMs int) []gate.Sample {
		return []gate.Sample{{ID: "a", Footprint: mem * mib, CPU: time.Duration(cpuMs) * time.Millisecond}}
	}
	for _, freeze := range []bool{false, true} {
		m, err := NewMachine(Config{Spec: Spec{Name: "gate", Gate: true}, Budget: 1024 * mib, Hold: 3 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if freeze {
			m.SetHoldFreeze()
		}
		if m.WantsThreads(false, false) || !m.WantsThreads(true, false) || !m.WantsThreads(false, true) {
			t.Fatalf("freeze %v, before any wait: want threads only under OOM or above the line", freeze)
		}
		m.Sample(at(0), Observation{Available: 900 * mib, Sandboxes: smp(10, 0)})
		if st := m.Sample(at(100), Observation{Available: 0, Sandboxes: smp(200, 50), UnderOOM: true, AboveHoldLine: true}); st.Hold != HoldBegan {
			t.Fatalf("freeze %v: hold %v, want began", freeze, st.Hold)
		}
		// The wait goes on with the flags read as clear: the tasks still
		// wait (v1) or the sandbox is still held frozen (v2).
		if !m.WantsThreads(false, false) {
			t.Fatalf("freeze %v: the hold waits: want threads", freeze)
		}
		// Below the line with nothing under OOM: the wait ends (v2 thaws
		// the held sandbox first, a period later).
		for ms := 200; ms <= 500 && m.WantsThreads(false, false); ms += 100 {
			m.Sample(at(ms), Observation{Available: 800 * mib, Sandboxes: smp(20, 60)})
		}
		if m.WantsThreads(false, false) {
			t.Fatalf("freeze %v: the wait resolved, still wants threads", freeze)
		}
	}
	m, err := NewMachine(Config{Spec: Spec{Name: "gate", Gate: true}, Budget: 1024 * mib})
	if err != nil {
		t.Fatal(err)
	}
	if m.WantsThreads(true, true) {
		t.Fatal("no hold: want no threads")
	}
}
