package replay

import (
	"math"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/trajectory"
)

func TestDefaultActionTimeout(t *testing.T) {
	mem := func(ramp, hold float64) trajectory.Action {
		return trajectory.Action{Class: "test", Mem: &trajectory.MemProfile{PeakMiB: 10, RampS: ramp, HoldS: hold}}
	}
	run := func(d float64) trajectory.Action {
		return trajectory.Action{Class: "test", Run: "true", Recorded: &trajectory.Recorded{DurationS: d}}
	}
	wf := func(acts ...trajectory.Action) trajectory.Workflow {
		return trajectory.Workflow{Version: trajectory.Version, ID: "w", Actions: acts}
	}
	tests := []struct {
		name  string
		wfs   []trajectory.Workflow
		scale float64
		want  time.Duration
	}{
		{name: "ten times the longest", wfs: []trajectory.Workflow{wf(mem(1, 4)), wf(mem(2, 10))}, scale: 1, want: 120 * time.Second},
		{name: "on the time scale", wfs: []trajectory.Workflow{wf(mem(2, 10))}, scale: 0.75, want: 90 * time.Second},
		{name: "scale 0 is 1", wfs: []trajectory.Workflow{wf(mem(2, 10))}, want: 120 * time.Second},
		{name: "short actions get the floor", wfs: []trajectory.Workflow{wf(mem(0.5, 1))}, scale: 0.2, want: MinActionTimeout},
		{name: "run actions keep their recorded time", wfs: []trajectory.Workflow{wf(run(8), mem(1, 1))}, scale: 0.1, want: 80 * time.Second},
		{name: "mem actions are compressed", wfs: []trajectory.Workflow{wf(run(1), mem(10, 70))}, scale: 0.1, want: 80 * time.Second},
		{name: "a hold forever does not count", wfs: []trajectory.Workflow{wf(mem(1, math.Inf(1)), mem(2, 5))}, scale: 1, want: 70 * time.Second},
		{name: "just above the floor", wfs: []trajectory.Workflow{wf(mem(1, 5.5))}, scale: 1, want: 65 * time.Second},
		{name: "no workflows", want: MinActionTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := DefaultActionTimeout(tt.wfs, tt.scale); got != tt.want {
				t.Errorf("DefaultActionTimeout = %v, want %v", got, tt.want)
			}
		})
	}
}
