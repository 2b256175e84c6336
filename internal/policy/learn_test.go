package policy

import (
	"context"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/admission"
	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/predict"
	"github.com/tenon-dev/tenon/internal/sandbox/fake"
	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/units"
)

// constPred predicts the same descriptor for every action.
type constPred struct{ peak int64 }

func (constPred) Name() string { return "const" }
func (p constPred) Predict(predict.ActionContext) predict.Descriptor {
	return predict.Descriptor{PredAvg: p.peak / 2, PredPeak: p.peak}
}

// TestRetryReservesWhatTheActionNeeded: an action OOM-killed in one attempt
// is predicted, in the next attempt, at least at what it reached (and at
// least 1.5 times the earlier prediction); a completed action's measured
// growth is remembered the same way.
func TestRetryReservesWhatTheActionNeeded(t *testing.T) {
	be := fake.New(fake.Options{Budget: units.GiB})
	defer be.Close()
	a := newAdmitter(constPred{peak: 100 * units.MiB}, 0)
	a.start(controller.Env{Clock: controller.RealClock{}, Budget: units.GiB, Backend: be}, admission.Config{})
	defer a.close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	act := &trajectory.Action{Class: "test", Command: "pytest", Run: "true"}
	predicted := func(ag *controller.Agent) int64 {
		t.Helper()
		g, err := a.ready(ctx, ag, act, "tenon")
		if err != nil {
			t.Fatal(err)
		}
		return g.Token.(*admission.Ticket).Request().Descriptor.PredPeak
	}
	run := func(ag *controller.Agent, o controller.Outcome) int64 {
		t.Helper()
		g, err := a.ready(ctx, ag, act, "tenon")
		if err != nil {
			t.Fatal(err)
		}
		p := g.Token.(*admission.Ticket).Request().Descriptor.PredPeak
		if err := a.done(ag, g, o); err != nil {
			t.Fatal(err)
		}
		return p
	}

	ag := &controller.Agent{ID: "w", Attempt: 1}
	if p := run(ag, controller.Outcome{Index: 0, OOM: true, PeakBytes: 120 * units.MiB}); p != 100*units.MiB {
		t.Fatalf("first attempt predicted %d MiB, want the model's 100", p/units.MiB)
	}
	ag.Attempt = 2
	if p := run(ag, controller.Outcome{Index: 0, PeakBytes: 400 * units.MiB}); p != 150*units.MiB {
		t.Errorf("after an OOM kill at 120 MiB predicted %d MiB, want 150 (1.5x the earlier 100)", p/units.MiB)
	}
	ag.Attempt = 3
	if p := predicted(ag); p != 400*units.MiB {
		t.Errorf("after a completed run at 400 MiB predicted %d MiB, want 400", p/units.MiB)
	}
	other := &controller.Agent{ID: "v", Attempt: 1}
	if p := predicted(other); p != 100*units.MiB {
		t.Errorf("another workflow predicted %d MiB, want the model's 100", p/units.MiB)
	}
}

func TestAgentReserve(t *testing.T) {
	wf := func(peaks ...float64) trajectory.Workflow {
		var w trajectory.Workflow
		for _, p := range peaks {
			w.Actions = append(w.Actions, trajectory.Action{Recorded: &trajectory.Recorded{PeakMiB: p}})
		}
		w.Actions = append(w.Actions, trajectory.Action{}) // no recording: ignored
		return w
	}
	tests := []struct {
		name   string
		wfs    []trajectory.Workflow
		budget int64
		want   int64
	}{
		{name: "largest recorded peak", wfs: []trajectory.Workflow{wf(10, 300), wf(200)}, budget: 2 * units.GiB, want: 300 * units.MiB},
		{name: "at most a quarter of the budget", wfs: []trajectory.Workflow{wf(1200)}, budget: 2 * units.GiB, want: 512 * units.MiB},
		{name: "nothing recorded", wfs: []trajectory.Workflow{wf()}, budget: 2 * units.GiB, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := AgentReserve(tt.wfs, tt.budget); got != tt.want {
				t.Errorf("AgentReserve = %d MiB, want %d MiB", got/units.MiB, tt.want/units.MiB)
			}
		})
	}
}
