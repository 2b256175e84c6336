package residency

import (
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
