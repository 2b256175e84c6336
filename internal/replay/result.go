package replay

import (
	"slices"
	"strings"
	"time"

	"github.com/tenon-dev/tenon/internal/controller"
)

// Result is what a replay run did. Times are offsets from the run's start.
type Result struct {
	Policy    string
	Budget    int64
	TimeScale float64
	Start     time.Time
	// Makespan is from the start to the end of the last workflow.
	Makespan  time.Duration
	Workflows []WorkflowResult // in Config.Workflows order
	Samples   []Sample
	// PeakBytes is the largest domain memory seen (samples, events and the
	// domain's own peak counter where it has one).
	PeakBytes int64

	Attempts       int // attempts started (passed AgentReady)
	FailedAttempts int // attempts that ended without completing
	OOMEvents      int // actions OOM-killed
	Timeouts       int // actions timed out
	Lost           int // sandboxes that could not be created or died
	Preempted      int // actions the OOM hold preempted (their attempts restarted)
	RolledBack     int // actions the OOM hold rolled back (each run again in its sandbox)
	Completed      int // workflows that completed
	Failed         int // workflows that exhausted retries or were cancelled
	// Infeasible counts the workflows that cannot fit the budget
	// (trajectory.ErrInfeasible): never started, not counted in Failed.
	Infeasible   int
	Actions      int // actions executed (Exec called), every attempt
	NonZeroExits int // actions that exited non-zero without OOM or timeout

	// Interrupted: the context ended while workflows still ran, and
	// failed them; the run's numbers are the interrupt's, not the
	// policy's.
	Interrupted bool

	// Residency sums the residency manager's events; zero for policies
	// that keep every sandbox resident.
	Residency ResidencyStats
}

// ResidencyStats are the lifecycle counters of a run (issue 6, point 7).
type ResidencyStats struct {
	Boundaries         int     `json:"boundaries"`
	Restartable        int     `json:"restartable_boundaries"`
	Teardowns          int     `json:"teardowns"`
	Rematerializations int     `json:"rematerializations"`
	BytesCaptured      int64   `json:"bytes_captured"`         // written to the blob store
	StateBytes         int64   `json:"state_bytes"`            // size of the captured state
	MemoryReclaimed    int64   `json:"memory_reclaimed_bytes"` // working set at teardown, summed
	OverheadS          float64 `json:"lifecycle_overhead_s"`   // teardown + rematerialization time
	// The page-out tier: page-outs and page-ins, the anonymous memory
	// paged out, and their time.
	PageOuts      int     `json:"page_outs,omitempty"`
	PageIns       int     `json:"page_ins,omitempty"`
	BytesPagedOut int64   `json:"bytes_paged_out,omitempty"`
	PageS         float64 `json:"page_s,omitempty"`
	// FreedByPageOut sums what the page-outs took off the domain (RAM
	// freed: anonymous memory paged out and page cache dropped).
	FreedByPageOut int64 `json:"freed_by_page_out_bytes,omitempty"`
	// Agents is the same per agent (its sandboxes across teardowns), by
	// workflow id.
	Agents []AgentResidency `json:"agents,omitempty"`
}

// AgentResidency is what residency did to one agent's sandbox.
type AgentResidency struct {
	Workflow string `json:"workflow"`
	// Floor is the largest working set measured at its boundaries: the
	// memory its sandbox holds while the agent waits.
	Floor          int64 `json:"floor_bytes"`
	Boundaries     int   `json:"boundaries"`
	Restartable    int   `json:"restartable_boundaries"`
	Teardowns      int   `json:"teardowns"`
	PageOuts       int   `json:"page_outs"`
	BytesPagedOut  int64 `json:"bytes_paged_out"`
	FreedByPageOut int64 `json:"freed_by_page_out_bytes"`
}

// Add counts e if it is a boundary, teardown, rematerialization, page-out
// or page-in event.
func (s *ResidencyStats) Add(e controller.Event) {
	var a *AgentResidency
	switch e.Kind {
	case controller.EventBoundary, controller.EventTeardown, controller.EventPageOut:
		a = s.agent(e.Workflow)
	}
	switch e.Kind {
	case controller.EventBoundary:
		s.Boundaries++
		a.Boundaries++
		a.Floor = max(a.Floor, e.WorkingSetBytes)
		if e.Restartable {
			s.Restartable++
			a.Restartable++
		}
	case controller.EventTeardown:
		a.Teardowns++
		s.Teardowns++
		s.BytesCaptured += e.BytesCaptured
		s.StateBytes += e.StateBytes
		s.MemoryReclaimed += e.WorkingSetBytes
		s.OverheadS += e.DurationS
	case controller.EventRemat:
		s.Rematerializations++
		s.OverheadS += e.DurationS
	case controller.EventPageOut:
		s.PageOuts++
		s.BytesPagedOut += e.PagedBytes
		s.FreedByPageOut += e.FreedBytes
		s.PageS += e.DurationS
		a.PageOuts++
		a.BytesPagedOut += e.PagedBytes
		a.FreedByPageOut += e.FreedBytes
	case controller.EventPageIn:
		s.PageIns++
		s.PageS += e.DurationS
	}
}

// agent returns the per-agent entry of workflow, adding it in order.
func (s *ResidencyStats) agent(workflow string) *AgentResidency {
	i, ok := slices.BinarySearchFunc(s.Agents, workflow, func(a AgentResidency, w string) int { return strings.Compare(a.Workflow, w) })
	if !ok {
		s.Agents = slices.Insert(s.Agents, i, AgentResidency{Workflow: workflow})
	}
	return &s.Agents[i]
}

// RestartableShare is the fraction of boundaries labelled restartable; 0
// without boundaries.
func (s ResidencyStats) RestartableShare() float64 {
	if s.Boundaries == 0 {
		return 0
	}
	return float64(s.Restartable) / float64(s.Boundaries)
}

// WorkflowResult is one workflow's fate.
type WorkflowResult struct {
	ID        string
	Submit    time.Duration // scaled arrival offset
	End       time.Duration // completion or failure
	Latency   time.Duration // End - Submit, retries included
	Attempts  int
	Completed bool
	// Infeasible: the workflow cannot fit the budget and was never started
	// (trajectory.ErrInfeasible).
	Infeasible bool
	OOMs       int
	Timeouts   int
	Lost       int
	// Preempted counts the attempts the OOM hold preempted, each restarted
	// without counting as a retry (at most policy.MaxPreempts).
	Preempted int
	// RolledBack counts the actions the OOM hold rolled back, each run
	// again in the same sandbox (the attempt going on).
	RolledBack int
	// StartRetries counts sandbox starts that failed and were retried
	// within the attempt (see startRetries).
	StartRetries int
	Queued       time.Duration // total time in ActionReady, every attempt
	Actions      int           // actions executed, every attempt
	// NonZeroExits counts actions that exited non-zero without OOM or timeout.
	NonZeroExits int
	// ActionPeaks are the measured peaks (sandbox memory, bytes) of the
	// last attempt's actions, by index; 0 for an action it did not run.
	ActionPeaks []int64
	Err         string // why it failed; "" when completed
}

// Sample is one sampler reading.
type Sample struct {
	T        time.Duration
	MemBytes int64 // domain usage
	Running  int   // actions executing
	Agents   int   // attempts between AgentReady and AgentDone
	Live     int   // live sandboxes
}

// Tally recomputes the counters from Workflows and raises PeakBytes to the
// largest sample. A failed workflow's attempts all count as failed; a
// completed one's all but the last.
func (res *Result) Tally() {
	res.Attempts, res.FailedAttempts, res.OOMEvents, res.Timeouts, res.Lost, res.Preempted, res.RolledBack = 0, 0, 0, 0, 0, 0, 0
	res.Completed, res.Failed, res.Actions, res.NonZeroExits, res.Infeasible = 0, 0, 0, 0, 0
	for _, s := range res.Samples {
		res.PeakBytes = max(res.PeakBytes, s.MemBytes)
	}
	for _, w := range res.Workflows {
		res.Attempts += w.Attempts
		res.OOMEvents += w.OOMs
		res.Timeouts += w.Timeouts
		res.Lost += w.Lost
		res.Preempted += w.Preempted
		res.RolledBack += w.RolledBack
		res.Actions += w.Actions
		res.NonZeroExits += w.NonZeroExits
		switch {
		case w.Infeasible:
			res.Infeasible++
		case w.Completed:
			res.Completed++
			res.FailedAttempts += w.Attempts - 1
		default:
			res.Failed++
			res.FailedAttempts += w.Attempts
		}
	}
}
