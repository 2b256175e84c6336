package policy

import (
	"slices"
	"testing"

	"github.com/tenon-dev/tenon/internal/gate"
	"github.com/tenon-dev/tenon/internal/trajectory"
)

// TestAllowAdmitted: the gate's denied sandboxes that run an admitted
// action within its prediction are allowed in admission order while their
// demand caps fit the room less what the allowed sandboxes project; one
// past its prediction (no cap), one with no admitted action, one the
// freezing hold holds and one that no longer fits stay denied.
func TestAllowAdmitted(t *testing.T) {
	const mib = 1 << 20
	d := gate.Decision{Sandboxes: []gate.SandboxDecision{
		{ID: "grower", Allowed: true, Demand: 30 * mib},
		{ID: "b", Demand: 5 * mib},
		{ID: "c", Demand: 5 * mib},
		{ID: "d", Demand: 5 * mib},
		{ID: "past", Demand: 50 * mib},
		{ID: "idle"},
		{ID: "held", Demand: 5 * mib},
	}, Permitted: []string{"grower"}, Denied: []string{"b", "c", "d", "held", "idle", "past"}}
	smp := []gate.Sample{
		{ID: "grower", HasCap: true, DemandCap: 30 * mib},
		{ID: "b", HasCap: true, DemandCap: 40 * mib},
		{ID: "c", HasCap: true, DemandCap: 40 * mib},
		{ID: "d", HasCap: true, DemandCap: 10 * mib},
		{ID: "past"},
		{ID: "idle", HasCap: true},
		{ID: "held", HasCap: true, DemandCap: 1 * mib},
	}
	// room 100 MiB: the grower projects 30, c (admitted first) takes 40,
	// b's 40 no longer fits beside them, d's 10 does.
	n := allowAdmitted(&d, smp, []string{"c", "past", "b", "held", "d", "grower"}, []string{"held"}, 100*mib)
	if want := []string{"c", "d", "grower"}; n != 2 || !slices.Equal(d.Permitted, want) {
		t.Fatalf("allowed %d, permitted %v, want 2 and %v", n, d.Permitted, want)
	}
	if want := []string{"b", "held", "idle", "past"}; !slices.Equal(d.Denied, want) {
		t.Fatalf("denied %v, want %v", d.Denied, want)
	}
	for _, sd := range d.Sandboxes {
		if sd.Allowed != slices.Contains(d.Permitted, sd.ID) {
			t.Errorf("%s: Allowed %v disagrees with Permitted", sd.ID, sd.Allowed)
		}
	}
	if n := allowAdmitted(&d, smp, []string{"b"}, nil, 50*mib); n != 0 {
		t.Fatalf("b allowed with no room left beside the allowed ones (%d)", n)
	}
}

// TestAdmittedRoomWiring: three admitted actions predicted at 100 MiB grow
// together until the gate turns yellow and denies two of them; with 290 MiB
// free, 128 MiB of margin and the senior grower's projected demand, both
// still fit their remaining 40 MiB, so the machine allows them, unless
// admitted-room=off.
func TestAdmittedRoomWiring(t *testing.T) {
	for _, off := range []bool{false, true} {
		m := mustMachine(t, Config{Spec: Spec{Name: "tenon", Gate: true, Admission: true, Predictor: PredCurrent},
			Budget: 1 << 30, Model: constPred{peak: 100 << 20}, NoAdmittedRoom: off})
		obs := &fakeObs{avail: 1 << 30, mem: map[string]int64{"sa": 10 << 20, "sb": 10 << 20, "sc": 10 << 20}}
		ids := []string{"a", "b", "c"}
		for _, id := range ids {
			m.Sample(at(0), Observation{Available: 1 << 30})
			if got := append(submit(t, m, 0, id, nil, obs), m.Pace(at(0), obs)...); len(got) != 1 {
				t.Fatalf("%s did not start: %v", id, got)
			}
		}
		for _, id := range ids {
			if _, _, err := m.ActionReady(at(0), id, 0, &trajectory.Action{Class: "x"}, "s"+id); err != nil {
				t.Fatal(err)
			}
		}
		if g := m.Schedule(at(0), obs); len(g) != 3 {
			t.Fatalf("admitted %d of 3", len(g))
		}
		var st Step
		for i := 1; i <= 6; i++ {
			mem := int64(10+10*i) << 20
			st = m.Sample(at(100*i), Observation{Available: 500<<20 - 3*mem, Sandboxes: []gate.Sample{
				{ID: "sa", Footprint: mem}, {ID: "sb", Footprint: mem}, {ID: "sc", Footprint: mem}}})
		}
		if st.Gate.Pressure != gate.Yellow {
			t.Fatalf("off=%v: pressure %v, want yellow", off, st.Gate.Pressure)
		}
		// yellow at the sixth period only: sb and sc denied there, or allowed once each
		want, allowed := []string{"sb", "sc"}, 0
		if !off {
			want, allowed = nil, 2
		}
		if !slices.Equal(st.Gate.Denied, want) || m.Stats().AdmittedRoom != allowed {
			t.Errorf("off=%v: denied %v, want %v; AdmittedRoom %d, want %d", off, st.Gate.Denied, want, m.Stats().AdmittedRoom, allowed)
		}
	}
}
