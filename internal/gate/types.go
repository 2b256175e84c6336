package gate

import "time"

// Sample is one sandbox's reading in an observation snapshot.
type Sample struct {
	ID        string        // stable sandbox identifier
	Footprint int64         // m = memory usage + swap in use, bytes
	CPU       time.Duration // accumulated CPU time of the sandbox's tasks
	Done      bool          // the sandbox completed; it is removed this iteration
	// MemStall is the sandbox's accumulated memory stall (its cgroup v2
	// memory.pressure "some" total), 0 where the kernel keeps none (v1).
	// The gate ignores it; the OOM hold's progress signal reads it.
	MemStall time.Duration
	// Blocked is the number of its threads in uninterruptible sleep (a
	// task in v1's OOM wait sleeps so), -1 when the backend cannot tell;
	// the OOM hold's progress signal reads it, the gate does not. 0
	// when Frozen (since Linux 6.1 a frozen thread reports D too).
	Blocked int
	// Frozen reports whether the sandbox's cgroup is frozen: by the gate's
	// denial, or paged out by residency and not let back yet. The OOM
	// hold's progress signal reads it (a frozen sandbox neither progresses
	// nor rests, and is stuck on memory only where the policy did not
	// freeze it), the gate does not.
	Frozen bool
	// Procs is the number of its tasks, its init included, 0 where the
	// caller does not say (the simulator, which has no init). A sandbox
	// running an action with nothing but its init left has finished the
	// action and is sending its result; the OOM hold's progress signal
	// reads it, the gate does not.
	Procs int
	// DemandCap, when HasCap is set, bounds the sandbox's projected demand:
	// the growth still expected of its running action as action admission
	// predicted it (predicted peak minus growth so far, at least the
	// bootstrap demand), or 0 for a sandbox running no action. Growth up to
	// the predicted peak was already reserved by admission's physical
	// check, so it does not count again; and a frozen sandbox's stale
	// estimate (frozen sandboxes burn no CPU, so it cannot update) does not
	// deny it forever. The caller sets no cap once an action has outgrown
	// its prediction: then the measured estimate rules.
	DemandCap int64
	HasCap    bool
}

// Ended reports whether nothing but the sandbox's init runs in it (Procs
// 1): no tool of it runs, and one whose action the policy still counts as
// running has finished it and is sending its result.
func (s Sample) Ended() bool { return s.Procs == 1 }

// Observation is one snapshot of the workload domain. Every decision of an
// iteration uses the same snapshot and control timestamp.
type Observation struct {
	Budget    int64    // the domain's memory limit, bytes; sizes the pressure regions
	Available int64    // M: budget minus the domain's working set, bytes
	Sandboxes []Sample // every live sandbox; one missing from the snapshot is removed
}

// SandboxDecision is the controller's view of one live sandbox after an iteration.
type SandboxDecision struct {
	ID          string
	State       State
	Rate        float64   // ĝ in bytes per second; 0 until Estimated
	Estimated   bool      // a valid sample has initialized ĝ
	Demand      int64     // projected demand d over the horizon T, bytes
	Allowed     bool      // the published permission
	Changed     bool      // the permission differs from the previous one (initially deny)
	DeniedSince time.Time // τ: start of the current denial episode; zero when allowed
	Overdue     bool      // denied for at least DMax at this iteration
}

// Decision is the result of one control iteration.
type Decision struct {
	Time      time.Time
	Pressure  Pressure
	B         int               // the yellow concurrency budget after this iteration's update
	Headroom  int64             // H = max(M − S, 0)
	RPrev     int64             // projected demand of the previously permitted set still live
	Available int64             // M as observed
	Permitted []string          // sorted
	Denied    []string          // sorted
	Sandboxes []SandboxDecision // sorted by ID
	Events    []Event
}

// EventKind names what an Event reports.
type EventKind string

// Event kinds. The controller emits the first group; the Loop adds the rest.
const (
	EventRegistered EventKind = "registered" // a new sandbox was observed
	EventRemoved    EventKind = "removed"    // a sandbox completed or vanished; its state was discarded
	EventPressure   EventKind = "pressure"   // pressure changed (From → To)
	EventBudget     EventKind = "budget"     // b changed (From → To)
	EventAllow      EventKind = "allow"      // the permission changed to allow
	EventDeny       EventKind = "deny"       // the permission changed to deny (a denial episode began)
	EventPause      EventKind = "pause"      // a denied Growing sandbox became PausedGrowing

	EventIteration     EventKind = "iteration"      // one Loop iteration completed (summary)
	EventObserveError  EventKind = "observe-error"  // the Observer failed; the iteration was skipped
	EventActuatorError EventKind = "actuator-error" // Allow or Deny failed; it is retried next iteration
	EventReleased      EventKind = "released"       // the Loop allowed every sandbox on shutdown
)

// Event is one log record of the gate.
type Event struct {
	Time      time.Time
	Kind      EventKind
	Sandbox   string   // empty for domain-wide events
	From, To  string   // old and new value for pressure, budget and permission changes
	Pressure  Pressure // the iteration's pressure
	B         int      // the iteration's budget
	Permitted []string // EventIteration only
	Denied    []string // EventIteration only
	Err       error    // error events only
}
