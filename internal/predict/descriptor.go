package predict

import "github.com/tenon-dev/tenon/internal/trajectory"

// Descriptor is what admission and execution control know about an action
// before it runs: D = (class, predicted average, predicted peak, heavy risk,
// priority).
type Descriptor struct {
	Class    string `json:"class"`
	PredAvg  int64  `json:"pred_avg_bytes"`  // predicted average memory above the level before the action
	PredPeak int64  `json:"pred_peak_bytes"` // predicted peak memory above the level before the action
	// PredP90 is the predicted 90th percentile of the peak (same baseline
	// as PredPeak): the peak is expected to stay at or below it for nine
	// actions in ten, so admission can charge it where an under-prediction
	// costs an OOM kill. It is never below PredPeak; a predictor without a
	// quantile of its own sets it to PredPeak, and 0 (a descriptor built
	// elsewhere) means unknown: use PredPeak.
	PredP90   int64   `json:"pred_p90_bytes"`
	HeavyRisk float64 `json:"heavy_risk"` // 0..1, probability that the peak exceeds the heavy threshold
	// Priority is the latency sensitivity: PriorityForeground for actions the
	// agent waits on, PriorityBackground for actions declared background.
	Priority int `json:"priority"`
}

// Priorities. Higher is more latency-sensitive.
const (
	PriorityBackground = 0
	PriorityForeground = 1
)

// Completed is the measured outcome of one completed action of the same
// workflow, appended to the history only after the action is done.
type Completed struct {
	Class      string  `json:"class"`
	Command    string  `json:"command,omitempty"`
	PeakBytes  int64   `json:"peak_bytes"`
	AvgBytes   int64   `json:"avg_bytes"`
	DurationS  float64 `json:"duration_s"`
	EndOffsetS float64 `json:"end_offset_s"` // end time, seconds since the workflow started
	// ResidentBytes is what the sandbox held just before the action; 0:
	// unknown.
	ResidentBytes int64 `json:"resident_bytes,omitempty"`
}

// ActionContext is everything a predictor may see before an action starts.
// It deliberately holds no field for the action's own measurements.
type ActionContext struct {
	WorkflowID string
	Class      string
	Command    string
	Hints      trajectory.Hints
	History    []Completed // completed actions of the same workflow, oldest first
	ElapsedS   float64     // seconds since the workflow started, at action-ready
	// ResidentBytes is what the sandbox holds now, at action-ready: its
	// whole memory usage, the level the action's peak will be measured
	// above. 0: unknown (a host that does not sample the sandbox).
	ResidentBytes int64
}

// ContextFor builds the context of action a from the workflow's completed
// history. Only a's Class, Command and Hints are read.
func ContextFor(workflowID string, a trajectory.Action, history []Completed, elapsedS float64) ActionContext {
	return ActionContext{
		WorkflowID: workflowID,
		Class:      a.Class,
		Command:    a.Command,
		Hints:      a.Hints,
		History:    history,
		ElapsedS:   elapsedS,
	}
}

// Predictor turns an action context into a descriptor. Implementations are
// safe for concurrent use.
type Predictor interface {
	Name() string
	Predict(ctx ActionContext) Descriptor
}

func priorityOf(h trajectory.Hints) int {
	if h.Background {
		return PriorityBackground
	}
	return PriorityForeground
}
