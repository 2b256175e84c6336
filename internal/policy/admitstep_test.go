package policy

import (
	"slices"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/gate"
	"github.com/tenon-dev/tenon/internal/predict"
	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/units"
)

const mib = units.MiB

func TestPhysicalHeadroom(t *testing.T) {
	tests := []struct {
		name     string
		avail    int64
		margin   int64
		admitted []Admitted
		want     int64
	}{
		{"nothing admitted: available less the margin", 1000 * mib, 100 * mib, nil, 900 * mib},
		{"admitted action counts its predicted peak", 1000 * mib, 100 * mib,
			[]Admitted{{Before: 50 * mib, Memory: 50 * mib, Peak: 300 * mib, Charge: 200 * mib}}, 600 * mib},
		{"a charge above the peak counts the charge", 1000 * mib, 100 * mib,
			[]Admitted{{Before: 50 * mib, Memory: 50 * mib, Peak: 100 * mib, Charge: 250 * mib}}, 650 * mib},
		{"growth so far is already in available", 1000 * mib, 100 * mib,
			[]Admitted{{Before: 50 * mib, Memory: 250 * mib, Peak: 300 * mib}}, 800 * mib},
		{"an action past its prediction counts nothing", 1000 * mib, 100 * mib,
			[]Admitted{{Before: 50 * mib, Memory: 650 * mib, Peak: 300 * mib}}, 900 * mib},
		{"paged out below the level at admission counts the whole peak and what comes back", 1000 * mib, 100 * mib,
			[]Admitted{{Before: 50 * mib, Memory: 10 * mib, Peak: 300 * mib}}, 560 * mib},
		{"several add up and may go negative", 500 * mib, 100 * mib,
			[]Admitted{{Peak: 300 * mib}, {Peak: 300 * mib}}, -200 * mib},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := PhysicalHeadroom(tc.avail, tc.margin, slices.Values(tc.admitted)); got != tc.want {
				t.Fatalf("headroom %d MiB, want %d MiB", got/mib, tc.want/mib)
			}
		})
	}
}

func TestLivenessHeadroom(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 10, 0, time.UTC)
	old := &Queued{Enqueued: now.Add(-LivenessWait), Peak: 500 * mib}
	young := &Queued{Enqueued: now.Add(-LivenessWait + time.Millisecond), Peak: 500 * mib}
	tests := []struct {
		name    string
		phys    int64
		running int
		oldest  *Queued
		want    int64
	}{
		{"nothing queued", -100 * mib, 0, nil, -100 * mib},
		{"an admitted action runs", -100 * mib, 1, old, -100 * mib},
		{"oldest has not waited long enough", -100 * mib, 0, young, -100 * mib},
		{"oldest waited: headroom raised to its peak", -100 * mib, 0, old, 500 * mib},
		{"headroom already larger stays", 800 * mib, 0, old, 800 * mib},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := LivenessHeadroom(tc.phys, tc.running, tc.oldest, now); got != tc.want {
				t.Fatalf("headroom %d MiB, want %d MiB", got/mib, tc.want/mib)
			}
		})
	}
}

func TestAgentMayStart(t *testing.T) {
	tests := []struct {
		name     string
		active   int
		queued   int
		pressure gate.Pressure
		headroom int64
		need     int64
		reserve  int64
		want     bool
		wantRead bool // the headroom is read
	}{
		{"no agent runs: start at once", 0, 3, gate.Red, -1, 500 * mib, 500 * mib, true, false},
		{"actions queued for admission: hold", 2, 1, gate.Green, 10000 * mib, 0, 0, false, false},
		{"gate not green: hold", 2, 0, gate.Yellow, 10000 * mib, 0, 0, false, false},
		{"first action and reserve fit: start", 2, 0, gate.Green, 600 * mib, 400 * mib, 200 * mib, true, true},
		{"reserve does not fit: hold", 2, 0, gate.Green, 599 * mib, 400 * mib, 200 * mib, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			read := false
			h := func() int64 { read = true; return tc.headroom }
			if got := AgentMayStart(tc.active, tc.queued, tc.pressure, h, tc.need, tc.reserve); got != tc.want {
				t.Fatalf("AgentMayStart = %v, want %v", got, tc.want)
			}
			if read != tc.wantRead {
				t.Fatalf("headroom read %v, want %v", read, tc.wantRead)
			}
			if open := PacingOpen(tc.active, tc.queued, tc.pressure); tc.want && !open {
				t.Fatalf("started while PacingOpen is false")
			}
		})
	}
}

func TestFirstPeak(t *testing.T) {
	pred := constPred{peak: 300 * mib}
	act := &trajectory.Action{Class: "bash", Command: "make"}
	if got := FirstPeak(pred, "w", act); got != 300*mib {
		t.Fatalf("first peak %d MiB, want the prediction's 300", got/mib)
	}
	if got := FirstPeak(pred, "w", nil); got != 0 {
		t.Fatalf("no action: %d, want 0", got)
	}
}

func TestRetryReserve(t *testing.T) {
	k := ActionKey{Workflow: "w", Index: 2}
	tests := []struct {
		name      string
		grown     int64
		oom       bool
		predicted int64
		want      int64 // the retry's predicted peak
	}{
		{"completed action: its growth", 300 * mib, false, 100 * mib, 300 * mib},
		{"prediction above the growth stays", 50 * mib, false, 100 * mib, 100 * mib},
		{"OOM kill: at least 1.5x the prediction", 10 * mib, true, 100 * mib, 150 * mib},
		{"OOM kill: larger growth kept", 400 * mib, true, 100 * mib, 400 * mib},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := RetryReserve{}
			r.Learn(k, tc.grown, tc.predicted, tc.oom)
			d := r.Apply(k, predict.Descriptor{PredPeak: tc.predicted, PredAvg: tc.predicted / 2})
			if d.PredPeak != tc.want {
				t.Fatalf("retry peak %d MiB, want %d MiB", d.PredPeak/mib, tc.want/mib)
			}
			if d.PredPeak > tc.predicted && (d.PredAvg < d.PredPeak*4/5 || d.HeavyRisk < 1) {
				t.Fatalf("raised descriptor %+v: average and heavy risk not raised", d)
			}
			if d := r.Apply(ActionKey{Workflow: "w", Index: 3}, predict.Descriptor{PredPeak: 1}); d.PredPeak != 1 {
				t.Fatalf("another action got %d", d.PredPeak)
			}
			learned := r[k]
			r.Learn(k, 1, tc.predicted, false) // a smaller later growth does not lower it
			if r[k] != learned {
				t.Fatalf("after a smaller growth %d MiB, want %d MiB kept", r[k]/mib, learned/mib)
			}
		})
	}
}

func TestDemandCap(t *testing.T) {
	boot := 16 * mib
	tests := []struct {
		name    string
		adm     *Admitted
		wantCap int64
		wantHas bool
	}{
		{"no admitted action: may not grow", nil, 0, true},
		{"below its predicted peak: the rest", &Admitted{Before: 40 * mib, Memory: 90 * mib, Peak: 200 * mib}, 150 * mib, true},
		{"charge above the peak: the rest of the charge", &Admitted{Before: 40 * mib, Memory: 90 * mib, Peak: 100 * mib, Charge: 300 * mib}, 250 * mib, true},
		{"nearly at its peak: bootstrap demand", &Admitted{Before: 40 * mib, Memory: 235 * mib, Peak: 200 * mib}, boot, true},
		{"outgrew its prediction: no cap", &Admitted{Before: 40 * mib, Memory: 340 * mib, Peak: 200 * mib}, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, has := DemandCap(tc.adm, boot)
			if has != tc.wantHas || has && c != tc.wantCap {
				t.Fatalf("cap %d MiB has %v, want %d MiB has %v", c/mib, has, tc.wantCap/mib, tc.wantHas)
			}
		})
	}
}

func TestAdmissionMargin(t *testing.T) {
	tests := []struct {
		name   string
		margin int64
		budget int64
		gc     gate.Config
		want   int64
	}{
		{"configured margin wins", 200 * mib, 64 * units.GiB, gate.Config{}, 200 * mib},
		{"default: a red region", 0, 2 * units.GiB, gate.Config{}, 256 * mib},
		{"default scales with the budget", 0, units.TiB, gate.Config{}, 128 * units.GiB},
		{"follows the gate's red region", 0, 16 * units.GiB, gate.Config{YellowFraction: 0.25, RedFraction: 0.25}, 4 * units.GiB},
		{"at least the gate's S", 0, units.GiB, gate.Config{YellowFraction: 0.01, RedFraction: 0.01, SafetyMargin: 500 * mib}, 500 * mib},
		{"no budget: no margin", 0, 0, gate.Config{}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := AdmissionMargin(tc.margin, tc.budget, tc.gc); got != tc.want {
				t.Fatalf("margin %d MiB, want %d MiB", got/mib, tc.want/mib)
			}
		})
	}
}
