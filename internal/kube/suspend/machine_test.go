package suspend

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/gate"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func actions(ds []Decision) []string {
	var out []string
	for _, d := range ds {
		out = append(out, string(d.Action)+" "+d.ID)
	}
	return out
}

func TestTickSuspendsWhatTheResidencyPolicyTearsDown(t *testing.T) {
	tests := []struct {
		name string
		p    gate.Pressure
		wait time.Duration
		want []string
	}{
		// Green without a predicted wait: the policy keeps everything.
		{"green keeps", gate.Green, 0, nil},
		// Green with a wait that amortizes suspend + resume (1 s + 10 s).
		{"green long wait", gate.Green, time.Minute, []string{"suspend ns/big", "suspend ns/small"}},
		// Yellow: a wait that amortizes suspend + resume, or an unknown
		// one; red: every restart-safe idle agent; largest first, the
		// pinned one and the busy one stay.
		{"yellow", gate.Yellow, 0, []string{"suspend ns/big", "suspend ns/small"}},
		{"yellow long wait", gate.Yellow, time.Minute, []string{"suspend ns/big", "suspend ns/small"}},
		{"yellow short wait keeps", gate.Yellow, 5 * time.Second, nil},
		{"red short wait", gate.Red, 5 * time.Second, []string{"suspend ns/big", "suspend ns/small"}},
		{"red", gate.Red, 0, []string{"suspend ns/big", "suspend ns/small"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := New(Config{})
			for _, id := range []string{"ns/small", "ns/big", "ns/pinned", "ns/busy"} {
				m.Track(id, false)
			}
			m.Idle("ns/small", t0, Idle{WorkingSet: 100 << 20, Restartable: true, PredictedWait: tc.wait})
			m.Idle("ns/big", t0, Idle{WorkingSet: 900 << 20, Restartable: true, PredictedWait: tc.wait})
			m.Idle("ns/pinned", t0, Idle{WorkingSet: 2 << 30, Restartable: false, PredictedWait: tc.wait})
			got := actions(m.Tick(t0.Add(time.Second), tc.p))
			if !slices.Equal(got, tc.want) {
				t.Errorf("Tick = %v, want %v", got, tc.want)
			}
			// A decided suspend is not decided again while it is applied.
			if again := m.Tick(t0.Add(2*time.Second), tc.p); len(again) != 0 {
				t.Errorf("second Tick = %v, want nothing", actions(again))
			}
		})
	}
}

func TestResumeWaitsForPressureToAllowIt(t *testing.T) {
	m := New(Config{})
	m.Track("a", false)
	m.Idle("a", t0, Idle{WorkingSet: 1 << 30, Restartable: true})
	if got := actions(m.Tick(t0, gate.Red)); !slices.Equal(got, []string{"suspend a"}) {
		t.Fatalf("red Tick = %v", got)
	}
	// Needed while the suspend is in flight: resumed once it lands.
	m.Needed("a")
	m.Applied("a", Suspend, t0.Add(200*time.Millisecond), nil)
	if s, _ := m.Costs(); s >= time.Second || s <= 200*time.Millisecond {
		t.Errorf("suspend cost %v: the 200 ms measurement did not move the 1 s prior", s)
	}
	// Red: a demand-driven resume waits (policy.MayRematerialize).
	if got := m.Tick(t0.Add(time.Second), gate.Red); len(got) != 0 {
		t.Fatalf("red Tick resumed: %v", actions(got))
	}
	got := m.Tick(t0.Add(2*time.Second), gate.Yellow)
	if !slices.Equal(actions(got), []string{"resume a"}) {
		t.Fatalf("yellow Tick = %v, want resume a", actions(got))
	}
	// A failed resume patch is retried.
	m.Applied("a", Resume, t0.Add(2*time.Second), errors.New("conflict"))
	if got := actions(m.Tick(t0.Add(3*time.Second), gate.Green)); !slices.Equal(got, []string{"resume a"}) {
		t.Fatalf("Tick after a failed resume = %v", got)
	}
	m.Applied("a", Resume, t0.Add(3*time.Second), nil)
	// Resuming: not a candidate until it runs again.
	m.Idle("a", t0.Add(3*time.Second), Idle{WorkingSet: 1 << 30, Restartable: true})
	m.Ready("a", t0.Add(5*time.Second))
	if _, r := m.Costs(); r >= 10*time.Second || r <= 2*time.Second {
		t.Errorf("resume cost %v: the 2 s measurement did not move the 10 s prior", r)
	}
	if got := actions(m.Tick(t0.Add(6*time.Second), gate.Red)); !slices.Equal(got, []string{"suspend a"}) {
		t.Errorf("red Tick after the resume = %v, want suspend a", got)
	}
}

func TestFailedSuspendKeepsTheAgentACandidate(t *testing.T) {
	m := New(Config{})
	m.Track("a", false)
	m.Idle("a", t0, Idle{WorkingSet: 1 << 30, Restartable: true})
	m.Tick(t0, gate.Red)
	m.Applied("a", Suspend, t0, errors.New("forbidden"))
	if got := actions(m.Tick(t0.Add(time.Second), gate.Red)); !slices.Equal(got, []string{"suspend a"}) {
		t.Errorf("Tick after a failed suspend = %v, want suspend a", got)
	}
}

func TestNeededAgentIsNotSuspended(t *testing.T) {
	m := New(Config{})
	m.Track("a", false)
	m.Track("s", true) // found Suspended at start
	m.Idle("a", t0, Idle{WorkingSet: 1 << 30, Restartable: true})
	m.Needed("a") // its next action began
	m.Idle("s", t0, Idle{WorkingSet: 1 << 30, Restartable: true})
	if got := m.Tick(t0, gate.Red); len(got) != 0 {
		t.Errorf("Tick = %v, want nothing", actions(got))
	}
	m.Needed("s")
	if got := actions(m.Tick(t0, gate.Green)); !slices.Equal(got, []string{"resume s"}) {
		t.Errorf("Tick = %v, want resume s", got)
	}
	m.Forget("s")
	if got := m.Tick(t0, gate.Green); len(got) != 0 {
		t.Errorf("Tick after Forget = %v", actions(got))
	}
}

// Suspended is true from the suspend decision until the resume is decided:
// the node agent takes a pod going in that window as tenon's doing.
func TestSuspendedFromDecisionToResume(t *testing.T) {
	m := New(Config{})
	m.Track("ns/a", false)
	m.Idle("ns/a", t0, Idle{WorkingSet: 1 << 30, Restartable: true})
	if m.Suspended("ns/a") || m.Suspended("ns/unknown") {
		t.Fatal("Suspended before any decision")
	}
	if got := actions(m.Tick(t0, gate.Red)); !slices.Equal(got, []string{"suspend ns/a"}) {
		t.Fatalf("Tick = %v", got)
	}
	if !m.Suspended("ns/a") {
		t.Error("not Suspended while the suspend is applied")
	}
	m.Applied("ns/a", Suspend, t0, nil)
	m.Needed("ns/a")
	if !m.Suspended("ns/a") {
		t.Error("not Suspended while the resume waits for the pressure")
	}
	if got := actions(m.Tick(t0, gate.Green)); !slices.Equal(got, []string{"resume ns/a"}) {
		t.Fatalf("Tick = %v", got)
	}
	if m.Suspended("ns/a") {
		t.Error("Suspended after the resume was decided")
	}
}
