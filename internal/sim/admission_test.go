package sim

import (
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/gate"
	"github.com/tenon-dev/tenon/internal/policy"
	"github.com/tenon-dev/tenon/internal/predict"
	"github.com/tenon-dev/tenon/internal/trajectory"
)

// fixedPredictor predicts each action's peak from its command (MiB), so
// tests control exactly what admission believes.
type fixedPredictor map[string]float64

func (fixedPredictor) Name() string { return "fixed" }

func (f fixedPredictor) Predict(ctx predict.ActionContext) predict.Descriptor {
	p := mib(f[ctx.Command])
	return predict.Descriptor{Class: ctx.Class, PredPeak: p, PredAvg: p * 4 / 5}
}

func fixedPredictors(f fixedPredictor) *Predictors {
	return &Predictors{half: map[string]int{}, byKnd: map[string][2]predict.Predictor{PredCurrent: {f, f}}}
}

// cmdAction is a Mem-profile action with its own command (the predictor key).
func cmdAction(cmd string, wait, peak, ramp, hold float64) trajectory.Action {
	a := memAction(wait, peak, ramp, hold)
	a.Command = cmd
	return a
}

func TestAgentPacing(t *testing.T) {
	// A starts at 0 with a 600 MiB action predicted exactly; B arrives at
	// 1 s. On a 1 GiB budget (margin 384 MiB) B's first action does not fit
	// next to A's, so pacing holds B until A has finished; with a small
	// first action B starts on arrival unless the agent reserve says no.
	tests := []struct {
		name      string
		aPeak     float64 // A's first action, MiB
		reserve   int64
		wantAtArr bool // B starts when it arrives
	}{
		{"big first action is held", 600, -1, false},
		{"small first action starts at once", 100, -1, true},
		{"reserve holds a small first action", 100, 800 * tMiB, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wfs := []trajectory.Workflow{
				wf("a", 0, cmdAction("a0", 0, tc.aPeak, 4, 4)),
				wf("b", 1, cmdAction("b0", 0, tc.aPeak, 4, 4)),
			}
			preds := fixedPredictors(fixedPredictor{"a0": tc.aPeak, "b0": tc.aPeak})
			r, err := Run(t.Context(), Config{Workflows: wfs, Policy: mustSpec(t, "admission"), Budget: 1 << 30,
				Retries: 5, Predictors: preds, AgentReserve: tc.reserve})
			if err != nil {
				t.Fatal(err)
			}
			a, b := r.Workflows[0], r.Workflows[1]
			if r.Completed != 2 || r.OOMEvents != 0 {
				t.Fatalf("completed %d, OOM %d", r.Completed, r.OOMEvents)
			}
			if got := b.Started == b.Submit; got != tc.wantAtArr {
				t.Fatalf("b started at %v (submitted %v), a ended %v; want start at arrival %v", b.Started, b.Submit, a.End, tc.wantAtArr)
			}
			if !tc.wantAtArr && b.Started < a.End {
				t.Fatalf("b started at %v before a ended at %v", b.Started, a.End)
			}
		})
	}
}

func TestAdmissionLiveness(t *testing.T) {
	// The first action leaves a background process holding 700 MiB; the
	// second (300 MiB) cannot pass the physical check (1024 − 700 − 384 <
	// 300) and nothing runs that could free memory. After LivenessWait it
	// is admitted anyway, and it fits the kernel's limit.
	first := trajectory.Action{Class: "bash", Command: "serve",
		Mem: &trajectory.MemProfile{PeakMiB: 700, RampS: 1, HoldS: 1, RetainMiB: 700, RetainS: 0.5, Background: true}}
	wfs := []trajectory.Workflow{wf("w", 0, first, cmdAction("work", 0, 300, 1, 1))}
	preds := fixedPredictors(fixedPredictor{"serve": 700, "work": 300})
	r, err := Run(t.Context(), Config{Workflows: wfs, Policy: mustSpec(t, "admission"), Budget: 1 << 30,
		Predictors: preds, Horizon: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	w := r.Workflows[0]
	if !w.Completed || r.OOMEvents != 0 || r.LivenessAdmits == 0 {
		t.Fatalf("completed %v, OOM %d, liveness admits %d", w.Completed, r.OOMEvents, r.LivenessAdmits)
	}
	// Alone the workflow takes 2.5 + 2 s; the second action waited >= 2 s.
	if min := secs(wfs[0].LengthS()) + policy.LivenessWait; w.End < min {
		t.Fatalf("ended at %v, before %v: the physical check did not hold the action", w.End, min)
	}
}

func TestRetryReservesWhatItNeeded(t *testing.T) {
	// A's action is predicted at 100 MiB but grows to 900 MiB while B holds
	// 300 MiB: the OOM killer takes A. Its retry reserves what the killed
	// attempt had grown, so admission holds it until B is done: one kill.
	wfs := []trajectory.Workflow{
		wf("a", 0.5, cmdAction("a0", 0, 900, 2, 1)),
		wf("b", 0, cmdAction("b0", 0, 300, 0.5, 10)),
	}
	preds := fixedPredictors(fixedPredictor{"a0": 100, "b0": 300})
	r, err := Run(t.Context(), Config{Workflows: wfs, Policy: mustSpec(t, "admission"), Budget: 1 << 30,
		Retries: 5, Predictors: preds, AgentReserve: -1})
	if err != nil {
		t.Fatal(err)
	}
	if r.Completed != 2 || r.OOMEvents != 1 || r.Workflows[0].Attempts != 2 {
		t.Fatalf("completed %d, OOM %d, attempts of a %d", r.Completed, r.OOMEvents, r.Workflows[0].Attempts)
	}
	if r.Workflows[0].End < r.Workflows[1].End {
		t.Fatalf("a's retry ended at %v, before b (%v): it did not wait for room", r.Workflows[0].End, r.Workflows[1].End)
	}
}

func TestLiveDefaults(t *testing.T) {
	big := []trajectory.Workflow{wf("w", 0, memAction(0, 5000, 1, 1))}
	// The margin is the gate's red region (12.5 % of the budget with Table
	// 5's regions), at least S.
	tests := []struct {
		name                    string
		budget                  int64
		gate                    gate.Config
		wfs                     []trajectory.Workflow
		margin, gateS, reserveW int64
	}{
		{"small budget: S is budget/8", 1 << 30, gate.Config{}, big, 128 * tMiB, 128 * tMiB, 256 * tMiB},
		{"large budget: S is 256 MiB", 16 << 30, gate.Config{}, big, 2 << 30, 256 * tMiB, 4 << 30},
		{"reserve is the largest peak", 64 << 30, gate.Config{}, big, 8 << 30, 256 * tMiB, 5000 * tMiB},
		{"margin follows the gate's red region", 16 << 30, gate.Config{YellowFraction: 0.125, RedFraction: 0.25}, big, 4 << 30, 256 * tMiB, 4 << 30},
		{"margin at least S", 1 << 30, gate.Config{YellowFraction: 0.01, RedFraction: 0.01, SafetyMargin: 500 * tMiB}, big, 500 * tMiB, 500 * tMiB, 256 * tMiB},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Config{Workflows: tc.wfs, Budget: tc.budget, Gate: tc.gate}.withDefaults()
			if err != nil {
				t.Fatal(err)
			}
			if c.Margin != tc.margin || c.Gate.SafetyMargin != tc.gateS || c.AgentReserve != tc.reserveW {
				t.Fatalf("margin %d gate S %d reserve %d (MiB)", c.Margin/tMiB, c.Gate.SafetyMargin/tMiB, c.AgentReserve/tMiB)
			}
		})
	}
}
