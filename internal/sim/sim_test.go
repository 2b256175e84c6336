package sim

import (
	"errors"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/gate"
	"github.com/tenon-dev/tenon/internal/policy"
	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/workload"
)

const tMiB = 1 << 20

func memAction(wait, peak, ramp, hold float64) trajectory.Action {
	return trajectory.Action{Wait: wait, Class: "bash", Command: "python run.py",
		Mem: &trajectory.MemProfile{PeakMiB: peak, RampS: ramp, HoldS: hold}}
}

func wf(id string, arrival float64, acts ...trajectory.Action) trajectory.Workflow {
	return trajectory.Workflow{Version: 1, ID: id, Arrival: arrival, Actions: acts}
}

func mustSpec(t *testing.T, name string) Spec {
	t.Helper()
	sp, err := ParsePolicy(name)
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

func generated(t *testing.T, n int, seed int64) []trajectory.Workflow {
	t.Helper()
	wfs, err := workload.Generate("swe", n, seed, workload.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return wfs
}

// sharedPredictors trains once per test binary; training dominates test time.
var sharedPredictors = map[string]*Predictors{}

func predsFor(t *testing.T, key string, wfs []trajectory.Workflow) *Predictors {
	t.Helper()
	if p, ok := sharedPredictors[key]; ok {
		return p
	}
	p, err := NewPredictors(wfs, PredictorOptions{Seed: 1, Trees: 10})
	if err != nil {
		t.Fatal(err)
	}
	sharedPredictors[key] = p
	return p
}

func TestConservation(t *testing.T) {
	wfs := generated(t, 16, 3)
	preds := predsFor(t, "swe16", wfs)
	for _, pol := range []string{"eager", "static-2", "agent-reservation", "gate", "tenon", "tenon-no-gate"} {
		t.Run(pol, func(t *testing.T) {
			var n int
			cfg := Config{Workflows: wfs, Policy: mustSpec(t, pol), Budget: 1 << 30, Retries: 2,
				Create: DefaultCreate, Teardown: DefaultTeardown, Rematerialize: DefaultRematerialize,
				SandboxBase: 4 * tMiB, ActionTimeout: time.Minute, Predictors: preds,
				Observe: func(a Accounting) {
					n++
					if a.Used != a.Allocated-a.Freed || a.Used != a.Resident {
						t.Fatalf("t=%v: used %d, allocated-freed %d, resident %d", a.T, a.Used, a.Allocated-a.Freed, a.Resident)
					}
					if a.Used > a.Budget {
						t.Fatalf("t=%v: used %d above budget %d after the OOM killer ran", a.T, a.Used, a.Budget)
					}
				}}
			r, err := Run(t.Context(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if n != r.Events || n == 0 {
				t.Fatalf("observed %d events, result says %d", n, r.Events)
			}
		})
	}
}

func TestOOMKillsLargest(t *testing.T) {
	// a holds 300 MiB from t=0.1 s; b ramps 200 MiB over 1 s from t=1.1 s.
	// The domain (400 MiB) overflows at t = 1.1 + 0.5 s and the kernel kills
	// the largest sandbox, a, although b is the one allocating.
	wfs := []trajectory.Workflow{
		wf("a", 0, memAction(0, 300, 0, 10)),
		wf("b", 1, memAction(0, 200, 1, 1)),
	}
	r, err := Run(t.Context(), Config{Workflows: wfs, Policy: mustSpec(t, "eager"), Budget: 400 * tMiB,
		Retries: 0, Create: DefaultCreate})
	if err != nil {
		t.Fatal(err)
	}
	a, b := r.Workflows[0], r.Workflows[1]
	if a.OOMs != 1 || a.Completed || b.OOMs != 0 || !b.Completed {
		t.Fatalf("want a killed and failed, b completed; got a=%+v b=%+v", a, b)
	}
	if d := a.End - 1600*time.Millisecond; d < 0 || d > time.Millisecond {
		t.Fatalf("kill at %v, want 1.6 s (exact crossing)", a.End)
	}
	if r.OOMEvents != 1 || r.PeakBytes > 400*tMiB {
		t.Fatalf("oom events %d peak %d", r.OOMEvents, r.PeakBytes)
	}
}

func TestVictimTieAndEmpty(t *testing.T) {
	h := newHost(100)
	if h.largest() != nil {
		t.Fatal("empty host has a victim")
	}
	for _, c := range []struct {
		id  string
		mem int64
	}{{"b", 10}, {"a", 10}, {"c", 5}} {
		sb := &sandbox{id: c.id}
		h.add(sb)
		h.setMem(sb, c.mem)
	}
	if v := h.largest(); v.id != "a" {
		t.Fatalf("victim %s, want a (largest, then smallest id)", v.id)
	}
}

func TestRetriesCapped(t *testing.T) {
	tests := []struct {
		name    string
		retries int
	}{{"no retries", 0}, {"two retries", 2}, {"five retries", 5}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// The profile fits (500 MiB) but not with the sandbox's base
			// memory: every attempt is OOM-killed.
			wfs := []trajectory.Workflow{wf("big", 0, memAction(1, 500, 1, 1))}
			r, err := Run(t.Context(), Config{Workflows: wfs, Policy: mustSpec(t, "eager"), Budget: 512 * tMiB, Retries: tc.retries,
				SandboxBase: 64 * tMiB})
			if err != nil {
				t.Fatal(err)
			}
			w := r.Workflows[0]
			if w.Completed || r.Failed != 1 || w.Attempts != tc.retries+1 || r.OOMEvents != tc.retries+1 ||
				r.FailedAttempts != tc.retries+1 {
				t.Fatalf("got %+v, result %+v", w, r)
			}
		})
	}
}

func TestFrozenMakesNoProgress(t *testing.T) {
	p := profileOf(memAction(0, 100, 10, 5))
	h := newHost(1 << 30)
	sb := &sandbox{id: "s"}
	h.add(sb)
	sb.act = &p
	h.setActive(sb, 0, true)
	h.advance(sb, 2*time.Second)
	if sb.progress != 2*time.Second || sb.mem != 20*tMiB {
		t.Fatalf("running: progress %v mem %d", sb.progress, sb.mem)
	}
	h.setActive(sb, 2*time.Second, false) // frozen
	h.advance(sb, 7*time.Second)
	if sb.progress != 2*time.Second || sb.mem != 20*tMiB || sb.cpu != 2*time.Second || h.r != 0 {
		t.Fatalf("frozen: progress %v mem %d cpu %v rate %v", sb.progress, sb.mem, sb.cpu, h.r)
	}
	h.setActive(sb, 7*time.Second, true) // thawed
	h.advance(sb, 8*time.Second)
	if sb.progress != 3*time.Second || sb.mem != 30*tMiB {
		t.Fatalf("thawed: progress %v mem %d", sb.progress, sb.mem)
	}
}

func TestFrozenTimeExtendsAction(t *testing.T) {
	// Under the gate, a workflow that is frozen takes longer than alone; a
	// single small workflow is never frozen (green) and takes exactly its
	// length plus lifecycle costs.
	wfs := []trajectory.Workflow{wf("w", 0, memAction(2, 100, 1, 1), memAction(1, 50, 0.5, 0.5))}
	r, err := Run(t.Context(), Config{Workflows: wfs, Policy: mustSpec(t, "gate"), Budget: 4 << 30,
		Create: DefaultCreate, Teardown: DefaultTeardown})
	if err != nil {
		t.Fatal(err)
	}
	want := secs(wfs[0].LengthS()) + DefaultCreate + DefaultTeardown
	if r.Workflows[0].End != want || r.Freezes != 0 {
		t.Fatalf("end %v want %v, freezes %d", r.Workflows[0].End, want, r.Freezes)
	}
}

func TestDeterministic(t *testing.T) {
	wfs := generated(t, 16, 3)
	preds := predsFor(t, "swe16", wfs)
	for _, pol := range []string{"eager", "tenon"} {
		t.Run(pol, func(t *testing.T) {
			run := func() *Result {
				r, err := Run(t.Context(), Config{Workflows: wfs, Policy: mustSpec(t, pol), Budget: 1 << 30, Retries: 5,
					Create: DefaultCreate, Teardown: DefaultTeardown, Rematerialize: DefaultRematerialize,
					ActionTimeout: time.Minute, Predictors: preds})
				if err != nil {
					t.Fatal(err)
				}
				r.Wall, r.GateStepWall = 0, 0
				return r
			}
			a, b := run(), run()
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("two runs differ: makespan %v vs %v, events %d vs %d", a.Makespan, b.Makespan, a.Events, b.Events)
			}
		})
	}
}

func TestEveryWorkflowAccounted(t *testing.T) {
	wfs := generated(t, 16, 3)
	preds := predsFor(t, "swe16", wfs)
	for _, pol := range PolicyNames() {
		if pol == "static-N" {
			pol = "static-3"
		}
		t.Run(pol, func(t *testing.T) {
			spec := mustSpec(t, pol)
			r, err := Run(t.Context(), Config{Workflows: wfs, Policy: spec, Budget: 1 << 30, Retries: 5,
				Create: DefaultCreate, Teardown: DefaultTeardown, Rematerialize: DefaultRematerialize,
				ActionTimeout: time.Minute, Predictors: preds})
			if err != nil {
				t.Fatal(err)
			}
			if r.Completed+r.Failed != len(wfs) || len(r.Workflows) != len(wfs) {
				t.Fatalf("completed %d + failed %d != %d", r.Completed, r.Failed, len(wfs))
			}
			var done int
			var queued time.Duration
			for i, w := range r.Workflows {
				if w.ID != wfs[i].ID || w.End < w.Submit || w.Attempts < 1 || w.Attempts > 6 {
					t.Fatalf("workflow %d: %+v", i, w)
				}
				// Admission waits are part of its time, and only admission
				// makes them.
				if w.Queued < 0 || w.Queued > w.End-w.Submit || !spec.Admission && w.Queued != 0 {
					t.Fatalf("workflow %d queued %v in %v (admission %v)", i, w.Queued, w.End-w.Submit, spec.Admission)
				}
				queued += w.Queued
				if w.Completed {
					done++
					if w.Latency < secs(wfs[i].LengthS()) {
						t.Fatalf("%s finished in %v, faster than alone (%v)", w.ID, w.Latency, secs(wfs[i].LengthS()))
					}
				}
			}
			if pol == "tenon" && queued == 0 {
				t.Errorf("tenon: no action waited for admission: 16 workflows in 1 GiB should queue")
			}
			if done != r.Completed || r.FailedAttempts != r.Attempts-r.Completed {
				t.Fatalf("done %d completed %d attempts %d failed attempts %d", done, r.Completed, r.Attempts, r.FailedAttempts)
			}
		})
	}
}

func TestStaticNLimitsAgents(t *testing.T) {
	var acts []trajectory.Workflow
	for i := range 6 {
		acts = append(acts, wf(string(rune('a'+i)), 0, memAction(0, 10, 1, 1)))
	}
	r, err := Run(t.Context(), Config{Workflows: acts, Policy: mustSpec(t, "static-2"), Budget: 1 << 30, RecordEvery: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range r.Samples {
		if s.Live > 2 {
			t.Fatalf("t=%v: %d live sandboxes under static-2", s.T, s.Live)
		}
	}
	if want := 6 * time.Second; r.Makespan != want { // three waves of 2 s
		t.Fatalf("makespan %v want %v", r.Makespan, want)
	}
}

func TestParsePolicy(t *testing.T) {
	tests := []struct {
		name    string
		want    Spec
		err     bool
		unknown bool
	}{
		{name: "eager", want: Spec{Name: "eager"}},
		{name: "Static-4", want: Spec{Name: "static-4", StaticN: 4}},
		{name: "tenon", want: Spec{Name: "tenon", Gate: true, Admission: true, Residency: true, Predictor: PredCurrent}},
		{name: "tenon-no-gate", want: Spec{Name: "tenon-no-gate", Admission: true, Residency: true, Predictor: PredCurrent}},
		{name: "tenon-history-pred", want: Spec{Name: "tenon-history-pred", Gate: true, Admission: true, Residency: true, Predictor: PredHistory}},
		{name: "agentcgroup", want: Spec{Name: "agentcgroup", AgentCgroup: true}},
		{name: "static-0", err: true},
		{name: "nope", err: true, unknown: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParsePolicy(tc.name)
			if tc.err {
				if err == nil || tc.unknown != errors.Is(err, ErrUnknownPolicy) {
					t.Fatalf("err %v, want an error (ErrUnknownPolicy: %v)", err, tc.unknown)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestProfileCurve(t *testing.T) {
	a := memAction(0, 100, 2, 1)
	a.Mem.RetainMiB, a.Mem.RetainS, a.Mem.FilesMiB, a.Mem.Background = 20, 1, 5, true
	p := profileOf(a)
	tests := []struct {
		at   time.Duration
		want int64
	}{{0, 0}, {time.Second, 50 * tMiB}, {2 * time.Second, 100 * tMiB}, {2500 * time.Millisecond, 100 * tMiB},
		{3 * time.Second, 20 * tMiB}}
	for _, tc := range tests {
		if got := p.memAt(tc.at); got != tc.want {
			t.Errorf("mem at %v = %d, want %d", tc.at, got, tc.want)
		}
	}
	if p.end != 4*time.Second || p.leaves != 25*tMiB || !p.pins {
		t.Fatalf("end %v leaves %d pins %v", p.end, p.leaves, p.pins)
	}
	if want := (50.0*2 + 100 + 20) / 4 * tMiB; math.Abs(float64(p.avg)-want) > 1 {
		t.Fatalf("avg %d want %v", p.avg, want)
	}
}

func TestStepCostRuns(t *testing.T) {
	for _, p := range []gate.Pressure{gate.Green, gate.Yellow} {
		if d, _ := StepCost(50, 3, p); d <= 0 {
			t.Fatalf("%v: step cost %v", p, d)
		}
	}
}

func TestPressureResidency(t *testing.T) {
	now := epoch.Add(time.Second)
	mk := func(restartable bool, wait time.Duration) []policy.IdleSandbox {
		return []policy.IdleSandbox{{ID: "s", WorkingSet: 64 << 20, Restartable: restartable, IdleSince: epoch,
			PredictedWait: wait, TeardownCost: 300 * time.Millisecond, RematCost: 300 * time.Millisecond,
			PageFrees: 40 << 20, PageInCost: 100 * time.Millisecond}}
	}
	tests := []struct {
		name string
		r    PressureResidency
		p    gate.Pressure
		idle []policy.IdleSandbox
		want string // "" none, else the kind
	}{
		{"green short wait retains", PressureResidency{}, gate.Green, mk(true, 1300*time.Millisecond), ""},
		{"green long wait reclaims", PressureResidency{}, gate.Green, mk(true, 5*time.Second), "teardown"},
		{"yellow reclaims", PressureResidency{}, gate.Yellow, mk(true, 0), "teardown"},
		{"red pinned stays without the tier", PressureResidency{}, gate.Red, mk(false, 0), ""},
		{"red pinned pages out with the tier", PressureResidency{PageOut: true}, gate.Red, mk(false, 0), "page-out"},
		{"green long wait stays while memory is plentiful", PressureResidency{}, gate.Green, mk(true, 5*time.Second), "plentiful"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			free, want := 0.3, tc.want
			if want == "plentiful" {
				free, want = 0.6, ""
			}
			ds := tc.r.Decide(now, tc.p, 0, free, -1, tc.idle)
			got := ""
			if len(ds) > 0 {
				got = ds[0].Kind.String()
			}
			if got != want {
				t.Fatalf("Decide = %v, want %q", ds, want)
			}
		})
	}
	if (PressureResidency{}).MayRematerialize(gate.Red) || !(PressureResidency{}).MayRematerialize(gate.Yellow) {
		t.Fatal("rematerialization: want none in red, demand-driven in yellow")
	}
}

// TestInfeasibleWorkflow: a workflow whose profile peaks above the budget is
// never started and is reported as infeasible, not failed, under every
// policy; the others run.
func TestInfeasibleWorkflow(t *testing.T) {
	wfs := []trajectory.Workflow{wf("big", 0, memAction(1, 600, 1, 1)), wf("small", 0, memAction(1, 100, 1, 1))}
	for _, pol := range []string{"eager", "static-1", "agent-reservation", "gate"} {
		t.Run(pol, func(t *testing.T) {
			r, err := Run(t.Context(), Config{Workflows: wfs, Policy: mustSpec(t, pol), Budget: 512 * tMiB})
			if err != nil {
				t.Fatal(err)
			}
			big, small := r.Workflows[0], r.Workflows[1]
			if !big.Infeasible || big.Attempts != 0 || r.Infeasible != 1 || r.Failed != 0 || r.OOMEvents != 0 {
				t.Fatalf("big %+v, result infeasible %d failed %d OOM %d", big, r.Infeasible, r.Failed, r.OOMEvents)
			}
			if !small.Completed || small.Infeasible || r.Completed != 1 {
				t.Fatalf("small %+v", small)
			}
		})
	}
}
