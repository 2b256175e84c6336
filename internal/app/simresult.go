package app

import (
	"github.com/tenon-dev/tenon/internal/replay"
	"github.com/tenon-dev/tenon/internal/sim"
)

// simReplay returns a simulated run as a replay.Result, so internal/report
// summarizes, tabulates and plots simulated runs exactly as live ones (the
// simulator itself imports nothing of the live replay).
func simReplay(r *sim.Result) *replay.Result {
	out := &replay.Result{
		Policy: r.Policy, Budget: r.Budget, TimeScale: 1, Makespan: r.Makespan, PeakBytes: r.PeakBytes,
		Attempts: r.Attempts, FailedAttempts: r.FailedAttempts, OOMEvents: r.OOMEvents,
		Timeouts: r.Timeouts, Completed: r.Completed, Failed: r.Failed, Actions: r.Actions, Infeasible: r.Infeasible,
	}
	for _, w := range r.Workflows {
		out.Workflows = append(out.Workflows, replay.WorkflowResult{ID: w.ID, Submit: w.Submit, End: w.End,
			Latency: w.Latency, Attempts: w.Attempts, Completed: w.Completed, Infeasible: w.Infeasible, OOMs: w.OOMs, Queued: w.Queued})
	}
	for _, s := range r.Samples {
		out.Samples = append(out.Samples, replay.Sample{T: s.T, MemBytes: s.MemBytes, Running: s.Running, Live: s.Live})
	}
	return out
}
