package residency

import (
	"reflect"
	"testing"
	"time"
)

func TestCheck(t *testing.T) {
	tests := []struct {
		name string
		obs  Observation
		want Verdict
	}{
		{"clean boundary", Observation{ActionExited: true, ResultRecorded: true}, Verdict{Restartable: true}},
		{"action running", Observation{ResultRecorded: true}, Verdict{Reason: "action still running"}},
		{"result not recorded", Observation{ActionExited: true}, Verdict{Reason: "action result not recorded"}},
		{"background process", Observation{ActionExited: true, ResultRecorded: true, Procs: []ProcInfo{{1234, "python3"}}},
			Verdict{Reason: "background process 1234 (python3) still running"}},
		{"many processes", Observation{ActionExited: true, ResultRecorded: true, Procs: []ProcInfo{{1, "a"}, {2, "b"}, {3, "c"}, {4, "d"}, {5, "e"}}},
			Verdict{Reason: "background processes 1 (a), 2 (b), 3 (c), and 2 more still running"}},
		{"pinned", Observation{ActionExited: true, ResultRecorded: true, Pinned: "persistent shell"}, Verdict{Reason: "pinned: persistent shell"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Check(tc.obs); got != tc.want {
				t.Errorf("Check = %+v, want %+v", got, tc.want)
			}
			wantLabel := LabelResidentOnly
			if tc.want.Restartable {
				wantLabel = LabelRestartable
			}
			if l := Check(tc.obs).Label(); l != wantLabel {
				t.Errorf("Label = %s, want %s", l, wantLabel)
			}
		})
	}
}

func TestDecideTickByTick(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	mk := func(id string, ws int64, restartable bool, wait time.Duration) IdleSandbox {
		return IdleSandbox{ID: id, WorkingSet: ws, Restartable: restartable, IdleSince: t0,
			PredictedWait: wait, TeardownCost: time.Second, RematCost: 2 * time.Second}
	}
	idle := []IdleSandbox{
		mk("small", 100<<20, true, 10*time.Second),
		mk("big", 900<<20, true, 4*time.Second),
		mk("pinned", 2000<<20, false, time.Minute),
		mk("mid", 400<<20, true, 0), // wait unknown
		mk("tie", 400<<20, true, 2*time.Second),
	}
	ids := func(ds []ReclaimDecision) []string {
		var out []string
		for _, d := range ds {
			out = append(out, d.ID)
		}
		return out
	}
	tests := []struct {
		name string
		at   time.Duration // since t0
		p    Pressure
		cfg  PolicyConfig
		want []string
	}{
		{"green t=0: waits ≥ 3s amortize", 0, Green, PolicyConfig{}, []string{"big", "small"}},
		{"green t=1s: big has 3s left", time.Second, Green, PolicyConfig{}, []string{"big", "small"}},
		{"green t=1.5s: big has 2.5s left", 1500 * time.Millisecond, Green, PolicyConfig{}, []string{"small"}},
		{"green t=7.5s: small has 2.5s left", 7500 * time.Millisecond, Green, PolicyConfig{}, nil},
		{"green t=20s: every wait is over", 20 * time.Second, Green, PolicyConfig{}, nil},
		{"green amortize 3x", 0, Green, PolicyConfig{GreenAmortize: 3}, []string{"small"}},
		{"green min working set", 0, Green, PolicyConfig{GreenMinWorkingSet: 200 << 20}, []string{"big"}},
		{"yellow t=0: all restartable by working set", 0, Yellow, PolicyConfig{}, []string{"big", "mid", "tie", "small"}},
		{"yellow t=20s: waits do not matter", 20 * time.Second, Yellow, PolicyConfig{}, []string{"big", "mid", "tie", "small"}},
		{"red", 0, Red, PolicyConfig{}, []string{"big", "mid", "tie", "small"}},
		{"red always resident", 0, Red, PolicyConfig{AlwaysResident: true}, nil},
		{"green always resident", 0, Green, PolicyConfig{AlwaysResident: true}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ids(Decide(t0.Add(tc.at), tc.p, idle, tc.cfg))
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Decide = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestMayRematerialize(t *testing.T) {
	tests := []struct {
		p          Pressure
		predictive bool
		want       bool
	}{
		{Green, true, true}, {Green, false, true},
		{Yellow, true, false}, {Yellow, false, true},
		{Red, true, false}, {Red, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.p.String(), func(t *testing.T) {
			if got := MayRematerialize(tc.p, tc.predictive); got != tc.want {
				t.Errorf("MayRematerialize(%v, predictive=%v) = %v, want %v", tc.p, tc.predictive, got, tc.want)
			}
		})
	}
}

func TestEWMA(t *testing.T) {
	e := newEWMA(0.5, 10*time.Second)
	steps := []struct {
		obs, want time.Duration
	}{
		{0, 10 * time.Second}, // prior before any measurement
		{2 * time.Second, 2 * time.Second},
		{4 * time.Second, 3 * time.Second},
		{7 * time.Second, 5 * time.Second},
	}
	for i, s := range steps {
		if i > 0 {
			e.observe(s.obs)
		}
		if got := e.get(); got != s.want {
			t.Errorf("step %d: ewma = %v, want %v", i, got, s.want)
		}
	}
}
