package policy

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/gate"
	"github.com/tenon-dev/tenon/internal/predict"
	"github.com/tenon-dev/tenon/internal/trajectory"
)

// constPred predicts the same descriptor for every action.
type constPred struct{ peak int64 }

func (constPred) Name() string { return "const" }
func (p constPred) Predict(predict.ActionContext) predict.Descriptor {
	return predict.Descriptor{PredAvg: p.peak / 2, PredPeak: p.peak}
}

// fakeObs is an Observer with values the test sets.
type fakeObs struct {
	avail int64
	mem   map[string]int64
}

func (o *fakeObs) Available() int64 { return o.avail }
func (o *fakeObs) Memory(id string) (int64, bool) {
	v, ok := o.mem[id]
	return v, ok
}

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

// wfPeak is a workflow with one action whose profiled peak is peakMiB.
func wfPeak(id string, peakMiB float64) *trajectory.Workflow {
	return &trajectory.Workflow{ID: id, Actions: []trajectory.Action{{Class: "bash", Command: "c",
		Mem: &trajectory.MemProfile{PeakMiB: peakMiB, RampS: 1, HoldS: 1}}}}
}

func mustMachine(t *testing.T, cfg Config) *Machine {
	t.Helper()
	m, err := NewMachine(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func submit(t *testing.T, m *Machine, ms int, id string, wf *trajectory.Workflow, obs Observer) []string {
	t.Helper()
	if wf == nil {
		wf = wfPeak(id, 10)
	}
	got, err := m.Submit(at(ms), id, 1, wf, obs)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestParseSpec(t *testing.T) {
	tests := []struct {
		in      string
		want    Spec
		wantErr error
	}{
		{in: "eager", want: Spec{Name: "eager"}},
		{in: " Eager ", want: Spec{Name: "eager"}},
		{in: "static-4", want: Spec{Name: "static-4", StaticN: 4}},
		{in: "Static-12", want: Spec{Name: "static-12", StaticN: 12}},
		{in: "static-0", wantErr: ErrBadOption},
		{in: "static-x", wantErr: ErrBadOption},
		{in: "static-N", wantErr: ErrBadOption},
		{in: "static", wantErr: ErrUnknown},
		{in: "greedy", wantErr: ErrUnknown},
		{in: "agent-reservation", want: Spec{Name: "agent-reservation", Reservation: true}},
		{in: "agentcgroup", want: Spec{Name: "agentcgroup", AgentCgroup: true}},
		{in: "tenon", want: Spec{Name: "tenon", Gate: true, Admission: true, Residency: true, Predictor: PredCurrent}},
		{in: "gate", want: Spec{Name: "gate", Gate: true}},
		{in: "tenon-always-resident", want: Spec{Name: "tenon-always-resident", Gate: true, Admission: true, Predictor: PredCurrent}},
		{in: "tenon-history-pred", want: Spec{Name: "tenon-history-pred", Gate: true, Admission: true, Residency: true, Predictor: PredHistory}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseSpec(tt.in)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("ParseSpec(%q) err = %v, want %v", tt.in, err, tt.wantErr)
			}
			if err == nil && got != tt.want {
				t.Errorf("ParseSpec(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
		})
	}
	_, err := ParseSpec("nope")
	for _, n := range []string{"eager", "static-N", "agentcgroup", "tenon"} {
		if err == nil || !strings.Contains(err.Error(), n) {
			t.Errorf("error %v does not list %q", err, n)
		}
	}
}

func TestConfigureParams(t *testing.T) {
	tests := []struct {
		name, policy string
		params       map[string]string
		wantErr      bool
		check        func(Config) bool
	}{
		{name: "eager takes none", policy: "eager", params: map[string]string{"x": "1"}, wantErr: true},
		{name: "reservation margin", policy: "agent-reservation", params: map[string]string{"margin": "64MiB"},
			check: func(c Config) bool { return c.ReserveMargin == 64<<20 }},
		{name: "reservation unknown", policy: "agent-reservation", params: map[string]string{"m": "1"}, wantErr: true},
		{name: "gate regions", policy: "gate", params: map[string]string{"yellow": "0.3", "red": "0.1"},
			check: func(c Config) bool { return c.GateConfig.YellowFraction == 0.3 && c.GateConfig.RedFraction == 0.1 }},
		{name: "gate bad region", policy: "gate", params: map[string]string{"yellow": "0.9"}, wantErr: true},
		{name: "agentcgroup low", policy: "agentcgroup", params: map[string]string{"low": "100MiB"},
			check: func(c Config) bool { return c.LowLimit == 100<<20 }},
		{name: "agentcgroup default low is budget/8", policy: "agentcgroup",
			check: func(c Config) bool { return c.LowLimit == 128<<20 }},
		{name: "agentcgroup bad high", policy: "agentcgroup", params: map[string]string{"high": "2"}, wantErr: true},
		{name: "tenon light lane off", policy: "tenon", params: map[string]string{"light-margin": "off"},
			check: func(c Config) bool { return c.LightMargin < 0 }},
		{name: "tenon light lane size", policy: "tenon", params: map[string]string{"light-margin": "64MiB"},
			check: func(c Config) bool { return c.LightMargin == 64<<20 }},
		{name: "tenon light lane bad", policy: "tenon", params: map[string]string{"light-margin": "-3"}, wantErr: true},
		{name: "tenon cpu pacing default", policy: "tenon",
			check: func(c Config) bool { return c.CPUBusy == DefaultCPUBusy }},
		{name: "tenon cpu pacing off", policy: "tenon", params: map[string]string{"cpu-pacing": "off"},
			check: func(c Config) bool { return c.CPUBusy == 0 }},
		{name: "tenon cpu pacing share", policy: "tenon", params: map[string]string{"cpu-pacing": "0.5"},
			check: func(c Config) bool { return c.CPUBusy == 0.5 }},
		{name: "tenon cpu pacing bad", policy: "tenon", params: map[string]string{"cpu-pacing": "1.5"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Resolve(tt.policy, Options{Budget: 1 << 30, Params: tt.params, Predictor: constPred{peak: 1 << 20}})
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if err == nil && tt.check != nil && !tt.check(c) {
				t.Errorf("config %+v", c)
			}
		})
	}
}

// TestLightMarginDefault: the light lane is the whole margin by default,
// never more than the margin, and none when turned off.
func TestLightMarginDefault(t *testing.T) {
	for _, tc := range []struct {
		name        string
		light, want int64
	}{
		{"default", 0, 100 << 20},
		{"part", 10 << 20, 10 << 20},
		{"capped", 1 << 30, 100 << 20},
		{"off", -1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := mustMachine(t, Config{Spec: Spec{Name: "admission", Admission: true}, Budget: 1 << 30,
				Model: constPred{peak: 1 << 20}, Margin: 100 << 20, LightMargin: tc.light})
			if m.cfg.LightMargin != tc.want {
				t.Errorf("light margin %d, want %d", m.cfg.LightMargin, tc.want)
			}
		})
	}
}

func TestStaticN(t *testing.T) {
	m := mustMachine(t, Config{Spec: Spec{Name: "static-2", StaticN: 2}})
	obs := &fakeObs{}
	var started []string
	for i, id := range []string{"a", "b", "c", "d"} {
		started = append(started, submit(t, m, i, id, nil, obs)...)
	}
	if !slices.Equal(started, []string{"a", "b"}) {
		t.Fatalf("started %v, want [a b]", started)
	}
	if got := m.AgentEnd(at(10), "b", obs); !slices.Equal(got, []string{"c"}) {
		t.Fatalf("after b ended: %v, want [c]", got)
	}
	if got := m.Withdraw(at(11), "d", obs); len(got) != 0 {
		t.Fatalf("withdrawing queued d started %v", got)
	}
	if got := m.AgentEnd(at(12), "a", obs); len(got) != 0 || m.Queued() != 0 {
		t.Fatalf("after a ended: started %v, queued %d; d was withdrawn", got, m.Queued())
	}
	if _, err := m.Submit(at(13), "c", 2, wfPeak("c", 1), obs); err == nil {
		t.Fatal("a second attempt of a running agent was accepted")
	}
}

func TestReservation(t *testing.T) {
	// Each reservation is the profiled peak plus a 100 MiB margin.
	m := mustMachine(t, Config{Spec: Spec{Name: "agent-reservation", Reservation: true}, Budget: 1024 << 20, ReserveMargin: 100 << 20})
	obs := &fakeObs{}
	if got := submit(t, m, 0, "huge", wfPeak("huge", 1000), obs); !slices.Equal(got, []string{"huge"}) {
		t.Fatalf("the first agent must start even when its reservation exceeds the budget: %v", got)
	}
	if got := submit(t, m, 1, "a", wfPeak("a", 600), obs); len(got) != 0 {
		t.Fatalf("a started beside huge: %v", got)
	}
	if got := submit(t, m, 2, "b", wfPeak("b", 200), obs); len(got) != 0 {
		t.Fatalf("b started ahead of a (head of line): %v", got)
	}
	if got := m.AgentEnd(at(3), "huge", obs); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("after huge ended: %v, want [a b] (700 + 300 MiB fit)", got)
	}
	if got := submit(t, m, 4, "c", wfPeak("c", 200), obs); len(got) != 0 {
		t.Fatalf("c started past the budget: %v", got)
	}
}

// admissionMachine is tenon's admission with a constant prediction of peak
// bytes and a margin of 100 MiB, no gate.
func admissionMachine(t *testing.T, peak int64) *Machine {
	return mustMachine(t, Config{Spec: Spec{Name: "admission", Admission: true, Predictor: PredCurrent},
		Budget: 1 << 30, Model: constPred{peak: peak}, Margin: 100 << 20})
}

func TestAdmission(t *testing.T) {
	m := admissionMachine(t, 400<<20)
	obs := &fakeObs{avail: 1 << 30, mem: map[string]int64{"sa": 50 << 20, "sb": 50 << 20}}
	for _, id := range []string{"a", "b"} {
		if got := submit(t, m, 0, id, nil, obs); !slices.Equal(got, []string{id}) {
			t.Fatalf("%s did not start: %v", id, got)
		}
	}
	act := &trajectory.Action{Class: "bash", Command: "c"}
	for _, id := range []string{"a", "b"} {
		if _, ok, err := m.ActionReady(at(10), id, 0, act, "s"+id); ok || err != nil {
			t.Fatalf("%s admitted at once (%v) without a Schedule", id, err)
		}
	}
	// 1 GiB available, 100 MiB margin: one 400 MiB prediction fits, then
	// 900 - 400 = 500 MiB for the second: both fit.
	obs.avail = 700 << 20 // only one fits: 700 - 100 = 600 ≥ 400, then 200 < 400
	g := m.Schedule(at(20), obs)
	if len(g) != 1 || g[0].Agent != "a" || g[0].Charge <= 0 || g[0].Peak != 400<<20 || !g[0].Heavy {
		t.Fatalf("Schedule = %+v, want a alone with a charge, its 400 MiB predicted peak, heavy", g)
	}
	if got := m.Schedule(at(30), obs); len(got) != 0 {
		t.Fatalf("b admitted with no physical headroom: %+v", got)
	}
	// a grew by 300 MiB: the physical check counts only its remaining growth.
	obs.mem["sa"] += 300 << 20
	obs.avail -= 300 << 20
	if got := m.Schedule(at(40), obs); len(got) != 0 {
		t.Fatalf("b admitted: available 400 - margin 100 - a's remaining 100 = 200 MiB < 400: %+v", got)
	}
	if err := m.ActionDone(at(50), "a", Done{PeakBytes: 350 << 20, Duration: time.Second}); err != nil {
		t.Fatal(err)
	}
	obs.avail = 1 << 30
	if g := m.Schedule(at(60), obs); len(g) != 1 || g[0].Agent != "b" {
		t.Fatalf("after a ended: %+v, want b", g)
	}
	if err := m.ActionDone(at(70), "a", Done{}); err == nil {
		t.Fatal("a second ActionDone for a was accepted")
	}
}

func TestAdmissionLiveness(t *testing.T) {
	m := admissionMachine(t, 400<<20)
	obs := &fakeObs{avail: 0, mem: map[string]int64{}}
	submit(t, m, 0, "a", nil, obs)
	act := &trajectory.Action{Class: "bash", Command: "c"}
	if _, _, err := m.ActionReady(at(0), "a", 0, act, "sa"); err != nil {
		t.Fatal(err)
	}
	if g := m.Schedule(at(1999), obs); len(g) != 0 {
		t.Fatalf("admitted before the liveness wait: %+v", g)
	}
	if g := m.Schedule(at(2000), obs); len(g) != 1 || m.Stats().LivenessAdmits != 1 {
		t.Fatalf("after %v with nothing running: %+v, liveness admits %d", LivenessWait, g, m.Stats().LivenessAdmits)
	}
}

// TestRetryLearns: an OOM-killed action's next attempt is predicted at
// least 1.5 times the earlier prediction (RetryReserve), only that action.
func TestRetryLearns(t *testing.T) {
	m := admissionMachine(t, 100<<20)
	obs := &fakeObs{avail: 1 << 30, mem: map[string]int64{"s": 0}}
	act := &trajectory.Action{Class: "bash", Command: "c"}
	attempt := func(n int, ms int, oom bool) int64 {
		t.Helper()
		if _, err := m.Submit(at(ms), "w", n, wfPeak("w", 1), obs); err != nil {
			t.Fatal(err)
		}
		if _, _, err := m.ActionReady(at(ms), "w", 0, act, "s"); err != nil {
			t.Fatal(err)
		}
		g := m.Schedule(at(ms), obs)
		if len(g) != 1 {
			t.Fatalf("attempt %d not admitted", n)
		}
		peak := m.admitted[0].peak
		if err := m.ActionDone(at(ms+1), "w", Done{PeakBytes: 10 << 20, OOM: oom}); err != nil {
			t.Fatal(err)
		}
		m.AgentEnd(at(ms+2), "w", obs)
		return peak
	}
	if p := attempt(1, 0, true); p != 100<<20 {
		t.Fatalf("first attempt predicted %d MiB", p>>20)
	}
	if p := attempt(2, 10, false); p != 150<<20 {
		t.Fatalf("retry after an OOM kill predicted %d MiB, want 150", p>>20)
	}
}

// TestDemandCapWiring: with admission the gate sees a sandbox's demand
// capped by its admitted action's remaining predicted growth, and 0 for a
// sandbox running no admitted action (DemandCap).
func TestDemandCapWiring(t *testing.T) {
	m := mustMachine(t, Config{Spec: Spec{Name: "tenon", Gate: true, Admission: true, Predictor: PredCurrent},
		Budget: 4 << 30, Model: constPred{peak: 200 << 20}})
	obs := &fakeObs{avail: 4 << 30, mem: map[string]int64{"sa": 40 << 20, "sb": 40 << 20}}
	submit(t, m, 0, "a", nil, obs)
	if _, _, err := m.ActionReady(at(0), "a", 0, &trajectory.Action{Class: "x"}, "sa"); err != nil {
		t.Fatal(err)
	}
	if g := m.Schedule(at(0), obs); len(g) != 1 {
		t.Fatal("not admitted")
	}
	a, ok := m.AdmittedIn("sa", 90<<20)
	if !ok {
		t.Fatal("sa has no admitted action")
	}
	if c, has := DemandCap(&a, 1); !has || c != 150<<20 {
		t.Fatalf("cap %d MiB has %v, want 150 MiB", c>>20, has)
	}
	if _, ok := m.AdmittedIn("sb", 40<<20); ok {
		t.Fatal("sb has an admitted action")
	}
	st := m.Sample(at(100), Observation{Available: 4 << 30, Sandboxes: []gate.Sample{{ID: "sa", Footprint: 90 << 20}, {ID: "sb", Footprint: 40 << 20}}})
	if len(st.Gate.Sandboxes) != 2 {
		t.Fatalf("gate saw %d sandboxes", len(st.Gate.Sandboxes))
	}
	if d := st.Gate.Sandboxes[1]; d.ID != "sb" || d.Demand != 0 {
		t.Errorf("idle sb has demand %d, want 0 (cap 0)", d.Demand)
	}
}

// TestHoldProgress: the hold steps once per Sample; a sandbox that used at
// least 5 % of a period of CPU since the last sample keeps it from being
// released, the odd wakeup does not, and a sandbox missing from one
// sample keeps its CPU time for the next. Sandbox "z" has nothing but its
// init and burns CPU all along (an executor retrying its result's write
// at the budget): it never counts.
func TestHoldProgress(t *testing.T) {
	m := mustMachine(t, Config{Spec: Spec{Name: "gate", Gate: true}, Budget: 1 << 30, Hold: time.Second})
	var zCPU time.Duration
	smp := func(cpu ...time.Duration) []gate.Sample {
		zCPU += 30 * time.Millisecond
		out := []gate.Sample{{ID: "z", Footprint: 1, CPU: zCPU, Procs: 1}}
		for i, c := range cpu {
			if c >= 0 {
				out = append(out, gate.Sample{ID: string(rune('a' + i)), Footprint: 1, CPU: c})
			}
		}
		return out
	}
	ms := time.Millisecond
	steps := []struct {
		ms    int
		cpu   []time.Duration
		under bool
		want  HoldAction
		by    string // Step.HoldProgress
	}{
		{0, []time.Duration{0, 0}, true, HoldBegan, ""},
		{500, []time.Duration{50 * ms, 0}, true, HoldNone, "cpu a"},  // a progressed
		{1000, []time.Duration{51 * ms, 0}, true, HoldNone, ""},      // a's wakeup: 1 ms < 5 ms, but 500 ms since the last progress
		{1400, []time.Duration{-1, 1 * ms}, true, HoldNone, ""},      // a missing: kept
		{1499, []time.Duration{52 * ms, 2 * ms}, true, HoldNone, ""}, // a back: 1 ms since its kept time
		{1500, []time.Duration{52 * ms, 2 * ms}, true, HoldRelease, ""},
		{1600, []time.Duration{52 * ms, 9 * ms}, false, HoldRearm, ""}, // b used CPU, but nothing waits
	}
	for i, s := range steps {
		st := m.Sample(at(s.ms), Observation{Available: 1, Sandboxes: smp(s.cpu...), UnderOOM: s.under})
		if st.Hold != s.want || st.HoldProgress != s.by {
			t.Fatalf("step %d (t=%dms): %v (progress %q), want %v (%q)", i, s.ms, st.Hold, st.HoldProgress, s.want, s.by)
		}
	}
	if hs := m.HoldStats(); hs.Holds != 1 || hs.Released != 1 {
		t.Fatalf("stats %+v", hs)
	}
	m.DisableHold()
	if m.HoldArmed() {
		t.Fatal("still armed after DisableHold")
	}
}

// TestHoldProgressStalled: a sandbox stalled on memory (a thread blocked,
// or its v2 stall total advancing) at a sample or the one before does not
// count as progress by CPU, however much CPU its other threads use: live
// on v1, growers in the OOM wait burned CPU in bursts and kept a deadlocked
// hold waiting until the actions' timeout.
func TestHoldProgressStalled(t *testing.T) {
	m := mustMachine(t, Config{Spec: Spec{Name: "gate", Gate: true}, Budget: 1 << 30, Hold: time.Second})
	ms := time.Millisecond
	steps := []struct {
		ms      int
		cpu     time.Duration // a's CPU time
		blocked int           // a's blocked threads
		stall   time.Duration // a's memory stall total
		want    HoldAction
		by      string
	}{
		{0, 0, 1, 0, HoldBegan, ""},
		{100, 20 * ms, 1, 0, HoldNone, ""},             // blocked now
		{200, 40 * ms, 0, 0, HoldNone, ""},             // blocked at the previous sample
		{300, 60 * ms, 0, 0, HoldNone, "cpu a"},        // two clean samples: progress
		{400, 80 * ms, 0, 5 * ms, HoldNone, ""},        // its stall total advanced (v2)
		{500, 100 * ms, 0, 5 * ms, HoldNone, ""},       // stalled at the previous sample
		{600, 120 * ms, -1, 5 * ms, HoldNone, "cpu a"}, // the backend cannot tell, no stall: counts
		{1500, 140 * ms, 1, 5 * ms, HoldNone, ""},
		{1601, 160 * ms, 1, 5 * ms, HoldRelease, ""}, // a second with nothing but a stalled sandbox's CPU
	}
	for i, s := range steps {
		smp := []gate.Sample{{ID: "a", Footprint: 1, CPU: s.cpu, Blocked: s.blocked, MemStall: s.stall}}
		st := m.Sample(at(s.ms), Observation{Available: 1, Sandboxes: smp, UnderOOM: true})
		if st.Hold != s.want || st.HoldProgress != s.by {
			t.Fatalf("step %d (t=%dms): %v (progress %q), want %v (%q)", i, s.ms, st.Hold, st.HoldProgress, s.want, s.by)
		}
	}
}

func TestAgentCgroupGrants(t *testing.T) {
	m := mustMachine(t, Config{Spec: Spec{Name: "agentcgroup", AgentCgroup: true}, HighMiB: 500, LowLimit: 100 << 20})
	obs := &fakeObs{}
	submit(t, m, 0, "w", nil, obs)
	for _, tc := range []struct {
		peak  float64
		limit int64
	}{{peak: 499, limit: 100 << 20}, {peak: 500}, {peak: 900}} {
		act := &trajectory.Action{Class: "x", Mem: &trajectory.MemProfile{PeakMiB: tc.peak, RampS: 1}}
		g, ok, err := m.ActionReady(at(0), "w", 0, act, "s")
		if err != nil || !ok || g.Limit != tc.limit {
			t.Fatalf("peak %v MiB: grant %+v ok %v err %v, want limit %d", tc.peak, g, ok, err, tc.limit)
		}
		if err := m.ActionDone(at(1), "w", Done{}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCancelAction: a waiting action that is given up leaves the queue; an
// admitted one gives its charge back; an attempt that ends drops both.
func TestCancelAction(t *testing.T) {
	m := admissionMachine(t, 100<<20)
	obs := &fakeObs{avail: 1 << 30, mem: map[string]int64{}}
	act := &trajectory.Action{Class: "x"}
	submit(t, m, 0, "a", nil, obs)
	submit(t, m, 0, "b", nil, obs)
	for _, id := range []string{"a", "b"} {
		if _, _, err := m.ActionReady(at(0), id, 0, act, "s"+id); err != nil {
			t.Fatal(err)
		}
	}
	m.CancelAction(at(1), "a")
	if m.Waiting() != 1 {
		t.Fatalf("waiting %d after a cancel, want 1", m.Waiting())
	}
	if g := m.Schedule(at(2), obs); len(g) != 1 || g[0].Agent != "b" {
		t.Fatalf("Schedule = %+v", g)
	}
	if st := m.Status(); st.Level == 0 {
		t.Fatalf("b's charge is not counted: %+v", st)
	}
	m.AgentEnd(at(3), "b", obs)
	if st := m.Status(); st.Level != 0 || m.Running() != 0 {
		t.Fatalf("after b ended: level %d running %d", st.Level, m.Running())
	}
}

// TestMachineReclaimPressure: over the machine's pressure and waiting
// actions, the reclaim pressure (ReclaimPressure, page-out tier on) is
// red in yellow while an action waits for admission, and yellow again
// once it is admitted.
func TestMachineReclaimPressure(t *testing.T) {
	reclaim := func(m *Machine) gate.Pressure { return ReclaimPressure(m.Pressure(), m.Waiting(), true) }
	m := admissionMachine(t, 400<<20)
	obs := &fakeObs{avail: 200 << 20, mem: map[string]int64{}}
	submit(t, m, 0, "a", nil, obs)
	m.Sample(at(0), Observation{Available: 200 << 20}) // a fifth of 1 GiB free: yellow
	if p, r := m.Pressure(), reclaim(m); p != gate.Yellow || r != gate.Yellow {
		t.Fatalf("nothing waits: pressure %v, reclaim pressure %v, want yellow for both", p, r)
	}
	if _, ok, err := m.ActionReady(at(1), "a", 0, &trajectory.Action{Class: "x"}, "sa"); err != nil || ok {
		t.Fatalf("ActionReady: ok %v err %v, want queued", ok, err)
	}
	if g := m.Schedule(at(1), obs); len(g) != 0 {
		t.Fatalf("a 400 MiB action admitted into 100 MiB of headroom: %+v", g)
	}
	if p, r := m.Pressure(), reclaim(m); p != gate.Yellow || r != gate.Red {
		t.Fatalf("a waits: pressure %v, reclaim pressure %v, want yellow and red", p, r)
	}
	obs.avail = 1 << 30
	if g := m.Schedule(at(2), obs); len(g) != 1 {
		t.Fatalf("a not admitted with the memory free: %+v", g)
	}
	if r := reclaim(m); r != gate.Yellow {
		t.Fatalf("nothing waits again: reclaim pressure %v, want yellow", r)
	}
}

// TestMachineReclaimNeed: the memory residency's pressure reclaims should
// free is unknown before the first sample, then what takes the available
// memory up to the yellow line (a quarter of the budget by default), and
// while an action waits for admission what its predicted peak and the
// margin need above the available memory, whichever is more.
func TestMachineReclaimNeed(t *testing.T) {
	m := admissionMachine(t, 400<<20)
	if got := m.ReclaimNeed(); got != -1 {
		t.Fatalf("before a sample: need %d, want -1 (unknown)", got)
	}
	obs := &fakeObs{avail: 200 << 20, mem: map[string]int64{}}
	submit(t, m, 0, "a", nil, obs)
	m.Sample(at(0), Observation{Available: 200 << 20})
	if got, want := m.ReclaimNeed(), int64(56<<20); got != want {
		t.Fatalf("200 MiB free, yellow line 256 MiB: need %d MiB, want %d", got>>20, want>>20)
	}
	if _, ok, err := m.ActionReady(at(1), "a", 0, &trajectory.Action{Class: "x"}, "sa"); err != nil || ok {
		t.Fatalf("ActionReady: ok %v err %v, want queued", ok, err)
	}
	if got, want := m.ReclaimNeed(), int64(300<<20); got != want {
		t.Fatalf("a 400 MiB action waits, margin 100 MiB, 200 MiB free: need %d MiB, want %d", got>>20, want>>20)
	}
	obs.avail = 1 << 30
	if g := m.Schedule(at(2), obs); len(g) != 1 {
		t.Fatalf("a not admitted with the memory free: %+v", g)
	}
	m.Sample(at(3), Observation{Available: 1 << 30})
	if got := m.ReclaimNeed(); got != 0 {
		t.Fatalf("all free, nothing waits: need %d, want 0", got)
	}
	e := mustMachine(t, Config{Spec: Spec{Name: "eager"}})
	e.Sample(at(0), Observation{Available: 1 << 30})
	if got := e.ReclaimNeed(); got != -1 {
		t.Fatalf("no budget: need %d, want -1", got)
	}
}

// TestPacing: with admission a new agent starts at once when none runs;
// otherwise when its first action's predicted peak plus the agent reserve
// fits the physical headroom (AgentMayStart), checked at every Pace.
func TestPacing(t *testing.T) {
	m := mustMachine(t, Config{Spec: Spec{Name: "admission", Admission: true, Predictor: PredCurrent},
		Budget: 1 << 30, Model: constPred{peak: 300 << 20}, Margin: 100 << 20, AgentReserve: 200 << 20})
	obs := &fakeObs{avail: 400 << 20, mem: map[string]int64{}}
	if got := submit(t, m, 0, "a", nil, obs); len(got) != 1 {
		t.Fatal("the first agent did not start")
	}
	if got := submit(t, m, 1, "b", nil, obs); len(got) != 0 {
		t.Fatalf("b started: headroom 300 MiB < 300 + 200: %v", got)
	}
	if got := m.Pace(at(2), obs); len(got) != 0 {
		t.Fatalf("b started at Pace: %v", got)
	}
	obs.avail = 700 << 20
	if got := m.Pace(at(3), obs); !slices.Equal(got, []string{"b"}) || m.Active() != 2 {
		t.Fatalf("Pace = %v (active %d), want [b]", got, m.Active())
	}
}

// agentPred predicts every action of an agent named in peaks at its
// peak, the others at 10 MiB.
type agentPred map[string]int64

func (agentPred) Name() string { return "per-agent" }
func (p agentPred) Predict(c predict.ActionContext) predict.Descriptor {
	peak, ok := p[c.WorkflowID]
	if !ok {
		peak = 10 << 20
	}
	return predict.Descriptor{PredAvg: peak / 2, PredPeak: peak}
}

// TestPacingHeavyWaits: a heavy action waiting for admission that would
// not fit even once the running actions ended (900 MiB in a 1 GiB budget
// with 500 MiB free and nothing running) does not close agent pacing; a
// light one waiting does, and so does a heavy one that would fit then
// (PacingOpen).
func TestPacingHeavyWaits(t *testing.T) {
	m := mustMachine(t, Config{Spec: Spec{Name: "admission", Admission: true, Predictor: PredCurrent},
		Budget: 1 << 30, Model: agentPred{"a": 900 << 20, "c": 300 << 20}, Margin: 100 << 20})
	obs := &fakeObs{avail: 500 << 20, mem: map[string]int64{}}
	ready := func(ms int, id string) {
		t.Helper()
		if _, ok, err := m.ActionReady(at(ms), id, 0, &m.agents[id].wf.Actions[0], "s"+id); err != nil || ok {
			t.Fatalf("ActionReady(%s) = %v, %v", id, ok, err)
		}
	}
	if got := submit(t, m, 0, "a", nil, obs); len(got) != 1 {
		t.Fatal("the first agent did not start")
	}
	ready(1, "a")
	if g := m.Schedule(at(1), obs); len(g) != 0 || m.Waiting() != 1 {
		t.Fatalf("a's 900 MiB action admitted with 500 MiB free: %v", g)
	}
	if got := submit(t, m, 2, "b", nil, obs); !slices.Equal(got, []string{"b"}) {
		t.Fatalf("b did not start while only a heavy action waits: %v", got)
	}
	obs.avail = 0
	ready(3, "b")
	if g := m.Schedule(at(3), obs); len(g) != 0 || m.Waiting() != 2 {
		t.Fatalf("b's action admitted with nothing free: %v", g)
	}
	obs.avail = 500 << 20
	if got := submit(t, m, 4, "c", nil, obs); len(got) != 0 {
		t.Fatalf("c started while a light action waits: %v", got)
	}
	// b's action admitted and running, grown to 200 MiB.
	obs.avail = 300 << 20
	if g := m.Schedule(at(5), obs); len(g) != 1 || g[0].Agent != "b" {
		t.Fatalf("admitted %v, want b's action", g)
	}
	obs.mem["sb"] = 200 << 20
	obs.avail = 400 << 20
	if got := m.Pace(at(6), obs); !slices.Equal(got, []string{"c"}) {
		t.Fatalf("Pace = %v, want [c] (only a's heavy action waits)", got)
	}
	// c's 300 MiB action is heavy too, but would fit once b's ended (200
	// MiB free less the 100 MiB margin, plus the 200 MiB b grew): it
	// blocks pacing.
	obs.avail = 200 << 20
	ready(7, "c")
	if g := m.Schedule(at(7), obs); len(g) != 0 || m.Waiting() != 2 {
		t.Fatalf("c's action admitted with 200 MiB free: %v", g)
	}
	if got := submit(t, m, 8, "d", nil, obs); len(got) != 0 {
		t.Fatalf("d started while c's heavy action waits for b's end: %v", got)
	}
	obs.mem["sb"] = 150 << 20 // 50 MiB short then: c's action no longer blocks
	if got := m.Pace(at(9), obs); !slices.Equal(got, []string{"d"}) {
		t.Fatalf("Pace = %v, want [d]", got)
	}
}

// TestInfeasible: an attempt whose workflow cannot fit the budget is
// refused, under every policy, and holds nothing.
func TestInfeasible(t *testing.T) {
	for _, sp := range []Spec{{Name: "eager"}, {Name: "static-1", StaticN: 1}, {Name: "agent-reservation", Reservation: true}} {
		t.Run(sp.Name, func(t *testing.T) {
			m := mustMachine(t, Config{Spec: sp, Budget: 100 << 20})
			obs := &fakeObs{}
			_, err := m.Submit(at(0), "big", 1, wfPeak("big", 101), obs)
			if !errors.Is(err, trajectory.ErrInfeasible) || !strings.Contains(err.Error(), "big") {
				t.Fatalf("Submit of a 101 MiB workflow under 100 MiB = %v, want ErrInfeasible naming it", err)
			}
			if got := submit(t, m, 1, "fits", wfPeak("fits", 100), obs); !slices.Equal(got, []string{"fits"}) {
				t.Fatalf("a workflow at the budget did not start: %v", got)
			}
		})
	}
}

// TestSetModel swaps the predictor between two actions: the queued one
// keeps its prediction, the next one is predicted by the new model; a
// machine without admission refuses.
func TestSetModel(t *testing.T) {
	m := admissionMachine(t, 100<<20)
	obs := &fakeObs{avail: 1 << 30, mem: map[string]int64{}}
	for _, id := range []string{"a", "b"} {
		if got := submit(t, m, 0, id, nil, obs); !slices.Equal(got, []string{id}) {
			t.Fatalf("%s did not start: %v", id, got)
		}
	}
	act := &trajectory.Action{Class: "bash", Command: "c"}
	if _, _, err := m.ActionReady(at(10), "a", 0, act, "sa"); err != nil {
		t.Fatal(err)
	}
	if err := m.SetModel(constPred{peak: 300 << 20}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := m.ActionReady(at(20), "b", 0, act, "sb"); err != nil {
		t.Fatal(err)
	}
	peaks := map[string]int64{}
	st := m.Status()
	for _, q := range append(st.Light, st.Heavy...) {
		peaks[q.ID] = q.PredPeak
	}
	if peaks["sa/0"] != 100<<20 || peaks["sb/0"] != 300<<20 {
		t.Errorf("queued predictions %v, want sa/0 100 MiB (old model) and sb/0 300 MiB (new)", peaks)
	}
	if err := m.SetModel(nil); !errors.Is(err, ErrBadOption) {
		t.Errorf("SetModel(nil) = %v, want ErrBadOption", err)
	}
	eager := mustMachine(t, Config{Spec: Spec{Name: "eager"}})
	if err := eager.SetModel(constPred{peak: 1}); !errors.Is(err, ErrBadOption) {
		t.Errorf("SetModel without admission = %v, want ErrBadOption", err)
	}
}

// TestCPUPacing: while the sandboxes' smoothed CPU use is at least
// CPUBusy of the host's CPUs, no new agent starts (the first always
// does); once it falls below, pacing starts the waiting one. With the
// host's CPUs unknown, or cpu-pacing off, the load does not matter.
func TestCPUPacing(t *testing.T) {
	for _, tc := range []struct {
		name      string
		cpus, use float64 // host CPUs, the share CPUBusy
		held      bool    // b waits while the sandboxes use both cores
	}{
		{"two cores busy", 2, DefaultCPUBusy, true},
		{"CPUs unknown", 0, DefaultCPUBusy, false},
		{"cpu-pacing off", 2, 0, false},
		{"eight cores", 8, DefaultCPUBusy, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := mustMachine(t, Config{Spec: Spec{Name: "admission", Admission: true, Predictor: PredCurrent},
				Budget: 1 << 30, Model: constPred{peak: 10 << 20}, CPUs: tc.cpus, CPUBusy: tc.use})
			obs := &fakeObs{avail: 1 << 30, mem: map[string]int64{}}
			if got := submit(t, m, 0, "a", nil, obs); len(got) != 1 {
				t.Fatal("the first agent did not start")
			}
			// a's sandbox uses both cores for 4 s (40 gate periods).
			var cpu time.Duration
			now := at(0)
			for range 40 {
				m.Sample(now, Observation{Available: 1 << 30, Sandboxes: []gate.Sample{{ID: "sa", CPU: cpu}}})
				now, cpu = now.Add(100*time.Millisecond), cpu+200*time.Millisecond
			}
			if busy := m.CPUBusy(); tc.cpus > 0 && tc.use > 0 && (busy < 1.7 || busy > 2) {
				t.Fatalf("smoothed CPU use %.2f cores after 4 s at 2, want 1.7-2", busy)
			}
			got, err := m.Submit(now, "b", 1, wfPeak("b", 10), obs)
			if err != nil {
				t.Fatal(err)
			}
			if started := len(got) == 1; started == tc.held {
				t.Fatalf("b started %v while the sandboxes use 2 cores of %v (CPUBusy %v)", started, tc.cpus, tc.use)
			}
			if !tc.held {
				return
			}
			// a waits for its model: no CPU for 4 s.
			for range 40 {
				m.Sample(now, Observation{Available: 1 << 30, Sandboxes: []gate.Sample{{ID: "sa", CPU: cpu}}})
				now = now.Add(100 * time.Millisecond)
				if busy := m.CPUBusy(); busy >= 1.6 {
					if got := m.Pace(now, obs); len(got) != 0 {
						t.Fatalf("b started at %.2f cores busy", busy)
					}
				}
			}
			if got := m.Pace(now, obs); !slices.Equal(got, []string{"b"}) {
				t.Fatalf("Pace at %.2f cores busy = %v, want [b]", m.CPUBusy(), got)
			}
		})
	}
}

// TestCPUPacingPrior: agents arriving together start as the per-agent
// prior (one core) allows on 2 CPUs, two of them; once the running agents
// are measured at a quarter of a core each, pacing starts the others.
func TestCPUPacingPrior(t *testing.T) {
	m := mustMachine(t, Config{Spec: Spec{Name: "admission", Admission: true, Predictor: PredCurrent},
		Budget: 1 << 30, Model: constPred{peak: 10 << 20}, CPUs: 2, CPUBusy: DefaultCPUBusy})
	obs := &fakeObs{avail: 1 << 30, mem: map[string]int64{}}
	var started []string
	for _, id := range []string{"a", "b", "c", "d"} {
		started = append(started, submit(t, m, 0, id, nil, obs)...)
	}
	if !slices.Equal(started, []string{"a", "b"}) {
		t.Fatalf("started %v at once, want [a b] (one core each of 2)", started)
	}
	// a and b use a quarter of a core each (0.5 s of CPU per second, in
	// all) for 60 s.
	var cpu time.Duration
	now := at(0)
	for range 600 {
		m.Sample(now, Observation{Available: 1 << 30, Sandboxes: []gate.Sample{{ID: "sa", CPU: cpu / 2}, {ID: "sb", CPU: cpu / 2}}})
		now, cpu = now.Add(100*time.Millisecond), cpu+50*time.Millisecond
	}
	if per := m.CPUPerAgent(); per < 0.25 || per > 0.5 {
		t.Fatalf("per-agent CPU %.2f after 60 s of 2 agents at 0.25, want 0.25-0.5 (the prior's weight fading)", per)
	}
	if got := m.Pace(now, obs); !slices.Equal(got, []string{"c", "d"}) {
		t.Fatalf("Pace = %v at %.2f cores per agent, want [c d]", got, m.CPUPerAgent())
	}
}

// TestCPUPacingPass: one Pace pass checks the CPU before each start: with
// four agents queued (for memory) behind a running one, it starts one (two
// agents at the prior's core each on 2 CPUs).
func TestCPUPacingPass(t *testing.T) {
	m := mustMachine(t, Config{Spec: Spec{Name: "admission", Admission: true, Predictor: PredCurrent},
		Budget: 1 << 30, Model: constPred{peak: 10 << 20}, CPUs: 2, CPUBusy: DefaultCPUBusy})
	obs := &fakeObs{avail: 1 << 20, mem: map[string]int64{}}
	var started []string
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		started = append(started, submit(t, m, 0, id, nil, obs)...)
	}
	if !slices.Equal(started, []string{"a"}) {
		t.Fatalf("started %v with 1 MiB free, want [a] (the first always starts)", started)
	}
	obs.avail = 1 << 30
	if got := m.Pace(at(1), obs); !slices.Equal(got, []string{"b"}) {
		t.Fatalf("Pace = %v, want [b]", got)
	}
}
