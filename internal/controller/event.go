package controller

// Event kinds. Every event carries t_s (seconds since the run started) and
// mem_bytes (domain usage at that time) where the emitter knows it.
const (
	EventRunStart       = "run_start"       // the run began; BudgetBytes, TimeScale
	EventRunEnd         = "run_end"         // every workflow ended
	EventSubmit         = "submit"          // workflow submitted (its arrival)
	EventAgentStart     = "agent_start"     // an attempt passed AgentReady
	EventSandboxCreate  = "sandbox_create"  // a sandbox came up
	EventSandboxDestroy = "sandbox_destroy" // a sandbox was destroyed
	EventAdmit          = "admit"           // ActionReady returned; QueuedS is the wait
	EventActionStart    = "action_start"    // Exec began
	EventActionDone     = "action_done"     // Exec returned; the predictor's training record
	EventOOM            = "oom"             // an action was OOM-killed
	EventTimeout        = "timeout"         // an action timed out
	EventSandboxLost    = "sandbox_lost"    // the sandbox could not be created or died
	EventPreempt        = "preempt"         // the OOM hold preempted an action to end a deadlock; its attempt restarts
	EventRollback       = "rollback"        // the OOM hold killed an action far past its reservation; it runs again
	EventRetry          = "retry"           // a failed attempt is re-enqueued
	EventWorkflowDone   = "workflow_done"   // every action of an attempt completed
	EventWorkflowFailed = "workflow_failed" // retries exhausted or the run was cancelled
	EventPause          = "pause"           // a policy paused a sandbox
	EventResume         = "resume"          // a policy resumed a sandbox
	EventSample         = "sample"          // periodic domain memory and concurrency
	EventError          = "error"           // an unexpected error that did not stop the run
	EventGate           = "gate"            // a gate iteration whose decision changed; Pressure, B, Permitted, Denied
	EventBoundary       = "boundary"        // an action-done boundary was labelled; Restartable, Reason
	EventTeardown       = "teardown"        // an idle sandbox was captured and destroyed; BytesCaptured, StateBytes, WorkingSetBytes, DurationS
	EventRemat          = "rematerialize"   // a torn-down sandbox was rebuilt; DurationS
	EventHold           = "oom_hold"        // the domain's OOM hold began, resolved, was released to the OOM killer or preempted an action (Reason, DurationS), or, every 10 s of a long wait, what kept it waiting (Reason "waiting: progress by cpu|resting ID", Sandbox)
	EventPageOut        = "page_out"        // an idle sandbox was frozen and paged out to swap; PagedBytes, FreedBytes, WorkingSetBytes, DurationS
	EventPageIn         = "page_in"         // a paged-out sandbox was paged back in and thawed; PagedBytes, DurationS, Reason (demand or prefetch)
	EventThawDeferred   = "thaw_deferred"   // a paged-out sandbox the policy let run stays frozen until all of its memory can come back (the domain at its budget); once per page-out, however often retried; Error
)

// Event is one line of the JSONL event log. Action is a pointer so that
// action 0 is distinguishable from "no action".
type Event struct {
	T        float64 `json:"t_s"`
	Kind     string  `json:"kind"`
	Policy   string  `json:"policy,omitempty"`
	Workflow string  `json:"workflow,omitempty"`
	Attempt  int     `json:"attempt,omitempty"`
	Action   *int    `json:"action,omitempty"`
	Class    string  `json:"class,omitempty"`
	Command  string  `json:"command,omitempty"`
	Sandbox  string  `json:"sandbox,omitempty"`
	// MemBytes is the domain memory usage when the event was recorded.
	MemBytes int64 `json:"mem_bytes,omitempty"`

	// admit
	QueuedS float64 `json:"queued_s,omitempty"`
	Charge  int64   `json:"charge_bytes,omitempty"`
	// PredPeak is the admitted action's predicted peak growth and Heavy
	// its lane (policies with admission).
	PredPeak int64 `json:"pred_peak_bytes,omitempty"`
	Heavy    bool  `json:"heavy,omitempty"`

	// action_done (also the predictor's training input)
	ActionKind string  `json:"action_kind,omitempty"` // "run", "mem" or "edit"
	AvgBytes   int64   `json:"avg_bytes,omitempty"`
	PeakBytes  int64   `json:"peak_bytes,omitempty"`
	DurationS  float64 `json:"duration_s,omitempty"`
	Exit       *int    `json:"exit,omitempty"`
	OOM        bool    `json:"oom,omitempty"`
	TimedOut   bool    `json:"timed_out,omitempty"`
	// StderrTail is the end of a failed action's stderr (a non-zero exit;
	// at most StderrTailBytes), so that a log says why a tool failed.
	StderrTail string `json:"stderr_tail,omitempty"`
	// ProfilePeakBytes is the declared Mem profile or recorded peak, for
	// comparing prediction inputs with measurements.
	ProfilePeakBytes int64 `json:"profile_peak_bytes,omitempty"`

	// sample
	Running int `json:"running,omitempty"` // actions executing
	Agents  int `json:"agents,omitempty"`  // attempts between AgentReady and AgentDone
	Live    int `json:"live,omitempty"`    // live sandboxes

	LatencyS float64 `json:"latency_s,omitempty"` // workflow_done/failed: submit to end

	// gate: the iteration's pressure, yellow budget b, and the permitted
	// and denied sandboxes. Written when any of them differs from the last
	// gate event, so every iteration's decision can be read off the log.
	Pressure  string   `json:"pressure,omitempty"`
	B         int      `json:"b,omitempty"`
	Permitted []string `json:"permitted,omitempty"`
	Denied    []string `json:"denied,omitempty"`

	// boundary, teardown, rematerialize (residency)
	Restartable     bool  `json:"restartable,omitempty"`
	BytesCaptured   int64 `json:"bytes_captured,omitempty"` // written to the blob store
	StateBytes      int64 `json:"state_bytes,omitempty"`    // size of the captured state
	WorkingSetBytes int64 `json:"working_set_bytes,omitempty"`
	// page_out, page_in: the anonymous memory paged out or back in, and
	// the drop of the sandbox's resident memory a page-out caused.
	PagedBytes int64 `json:"paged_bytes,omitempty"`
	FreedBytes int64 `json:"freed_bytes,omitempty"`

	// run_start
	BudgetBytes int64   `json:"budget_bytes,omitempty"`
	TimeScale   float64 `json:"time_scale,omitempty"`
	Workflows   int     `json:"workflows,omitempty"`
	Reason      string  `json:"reason,omitempty"`
	Error       string  `json:"error,omitempty"`
}

// IntPtr returns a pointer to v, for Event.Action and Event.Exit.
func IntPtr(v int) *int { return &v }
