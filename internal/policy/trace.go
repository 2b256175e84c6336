package policy

import "time"

// Call is one event a machine handled: its inputs, the observations it
// read and what it decided. A machine with a trace (SetTrace) reports
// every call, so that two hosts can be checked to drive it the same way
// (the simulator and the live adapter: internal/live's equivalence test).
type Call struct {
	Kind    string // "submit", "end", "ready", "cancel", "done", "schedule", "pace", "sample"
	T       time.Time
	Agent   string
	Attempt int
	Index   int
	Sandbox string
	Done    Done        // "done"
	Sample  Observation // "sample"
	Reads   []Read      // what the Observer answered, in order
	Started []string    // "submit", "end", "pace": agents that may start
	Grants  []Grant     // "schedule": admissions; "ready": the admission when at once
	Step    Step        // "sample"
	Err     string
}

// Read is one Observer answer: Sandbox "" is Available.
type Read struct {
	Sandbox string
	Value   int64
	OK      bool
}

// SetTrace makes the machine report every call to fn (nil: none).
func (m *Machine) SetTrace(fn func(Call)) { m.trace = fn }

// begin starts recording a call when tracing; obs is wrapped so that its
// answers are recorded.
func (m *Machine) begin(c Call, obs Observer) (*Call, Observer) {
	if m.trace == nil {
		return nil, obs
	}
	cp := new(Call) // only a traced call allocates
	*cp = c
	if obs != nil {
		obs = tapObserver{obs: obs, c: cp}
	}
	return cp, obs
}

// end reports a recorded call.
func (m *Machine) end(c *Call) {
	if c != nil {
		m.trace(*c)
	}
}

// tapObserver records an Observer's answers into a call.
type tapObserver struct {
	obs Observer
	c   *Call
}

func (t tapObserver) Available() int64 {
	v := t.obs.Available()
	t.c.Reads = append(t.c.Reads, Read{Value: v, OK: true})
	return v
}

func (t tapObserver) Memory(id string) (int64, bool) {
	v, ok := t.obs.Memory(id)
	t.c.Reads = append(t.c.Reads, Read{Sandbox: id, Value: v, OK: ok})
	return v, ok
}
