package policy

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/tenon-dev/tenon/internal/admission"
	"github.com/tenon-dev/tenon/internal/gate"
	"github.com/tenon-dev/tenon/internal/predict"
	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/units"
)

// Spec is what one policy name switches on.
type Spec struct {
	Name        string
	StaticN     int  // > 0: at most N attempts at once (static-N)
	Reservation bool // each attempt reserves its profiled lifetime peak (agent-reservation)
	Gate        bool // runtime execution gate (gate.Controller) and, where the host has it, the OOM hold
	Admission   bool // water-level action admission with agent pacing
	Residency   bool // idle restart-safe sandboxes may be torn down between actions
	Predictor   string
	// AgentCgroup classes every action High or Low from its profiled peak
	// and runs Low ones under a memory.high limit (the AgentCgroup baseline).
	AgentCgroup bool
}

// Config is a machine's configuration: the policy's Spec and the
// parameters its mechanisms run with, on the host's clock.
type Config struct {
	Spec
	Budget int64 // the workload domain's memory budget, bytes

	// ReserveMargin is added to every agent-reservation (bytes).
	ReserveMargin int64

	// GateConfig is the gate's configuration on the host's clock; New fills
	// its safety margin for the budget (GateConfigFor).
	GateConfig gate.Config
	// Hold is how long tasks may wait at the budget under the domain's OOM
	// hold with no sandbox making progress (HoldTimeout); 0 turns the hold
	// off. A host without a hold calls DisableHold.
	Hold time.Duration
	// HoldMaxWait bounds a hold while sandboxes progress (0: HoldMaxWait(Hold);
	// Configure sets HoldMaxWaitFor(Hold, Options.ActionTimeout)).
	HoldMaxWait time.Duration
	// HeldBudget runs the gate on a held budget while the hold is armed
	// (gate.Config.HeldBudget; the held-budget= parameter). The tenon
	// policies' Configure turns it on; held-budget=off is the ablation
	// (internal/gate/doc.go, "Held budget").
	HeldBudget bool

	AdmissionConfig admission.Config // zero fields: defaults scaled to Budget
	// Model predicts each action's memory for admission (Spec.Predictor names its kind).
	Model predict.Predictor
	// Margin is admission's physical safety margin (0: AdmissionMargin's default).
	Margin int64
	// LightMargin is how much of Margin light actions may use, the
	// admission's light lane (internal/admission): 0 means all of it,
	// a negative value none (the ablation). It is never more than Margin.
	LightMargin int64
	// AgentReserve is the headroom a new agent leaves free beyond its first
	// action's predicted peak (AgentPacing).
	AgentReserve int64
	// CPUs is the host's CPUs the sandboxes share and CPUBusy the share of
	// them the sandboxes may use before agent pacing waits (cpupace.go);
	// either 0 turns CPU pacing off.
	CPUs    float64
	CPUBusy float64

	// AgentCgroup's High threshold in MiB of profiled peak and its Low limit
	// in bytes (AgentCgroupThreshold, AgentCgroupLowLimit).
	HighMiB  float64
	LowLimit int64

	// NoTaskReserve turns off TaskReserve (the task-reserve=off
	// parameter): an action is admitted by its prediction even where the
	// same command of the same task grew far past it in another agent.
	NoTaskReserve bool
	// NoRollback turns off the hold's rollback (the rollback=off
	// parameter; hold_rollback.go) where the host offers it.
	NoRollback bool
}

// Machine is a policy as a synchronous state machine: hosts (the live
// adapter in internal/live, the simulator in internal/sim) feed it events
// with the time they happened and observations of the domain, and act on
// the decisions it returns. It starts no goroutine, reads no clock and
// touches no kernel or backend; it is not safe for concurrent use.
//
// The events and what they may decide:
//
//	Submit(now, agent, obs)      an attempt wants to start → agents to start
//	Withdraw(now, agent, obs)    a queued or started attempt is abandoned → agents to start
//	AgentEnd(now, agent, obs)    an attempt ended → agents to start
//	ActionReady(now, ...)        an action waits for admission → an admission when at once
//	CancelAction(now, agent)     a waiting action is abandoned
//	ActionDone(now, agent, done) an admitted action ended
//	Schedule(now, obs)           admission → actions admitted
//	Pace(now, obs)               agent pacing → agents to start
//	Sample(now, obs)             one gate period → allow/deny per sandbox, the OOM hold's action
type Machine struct {
	cfg Config
	now time.Time

	agents map[string]*agentState
	queue  []*agentState // attempts waiting to start, in arrival order

	slotsUsed int   // static-N and agent-reservation attempts running
	reserved  int64 // their reservations
	active    int   // attempts started under agent pacing

	adm      *admission.Admitter
	tickets  map[*admission.Ticket]*agentState // waiting for admission
	admitted []*agentState                     // holding an admitted ticket
	seq      uint64                            // tickets enqueued
	learned  RetryReserve
	// taskLearned is what gross under-predictions grew, by task and
	// command (TaskReserve).
	taskLearned TaskReserve
	stats       MachineStats
	// started lists the started attempts in start order (a deterministic
	// order for reading their sandboxes).
	started []*agentState
	// ended holds the floors of the last attempts that ended (at most
	// floorHistory), for PredictFloor.
	ended []int64
	// firstPeaks holds the predicted first-action peaks of the last
	// attempts pacing started (at most floorHistory), for AgentSlots.
	firstPeaks []int64

	gate        *gate.Controller
	pressure    gate.Pressure
	thresh      gate.Thresholds
	available   int64 // at the last sample
	rprev       int64 // the gate's RPrev at the last sample
	sampled     bool  // a sample set available
	hold        *OOMHold
	freeze      *holdFreezer // the freezing hold (SetHoldFreeze), nil otherwise
	lastCPU     map[string]cpuSeen
	cpu         cpuLoad              // the sandboxes' CPU use, for CPU pacing
	rest        holdRest             // the hold's resting-at-peak progress signal
	frozen      []string             // sandboxes denied at the last gate step (sorted)
	deniedAt    map[string]time.Time // since when each of them has been denied
	lifted      map[string]bool      // sandboxes whose denial the hold lifted at the last step
	holdThawed  int                  // sandboxes whose gate denial the hold lifted (thawResting)
	preempt     bool                 // the host restarts attempts the hold preempts (SetHoldPreempt)
	preemptIdle bool                 // it also ends attempts that run no action (SetHoldPreemptIdle)
	rollback    bool                 // the host rolls actions back to their boundary (SetHoldRollback)
	preempted   map[string]bool      // sandboxes whose action the hold preempted, until it ends
	// relAvail is the domain's available memory when the hold last
	// released a wait (at relAt), until a wait resolves; -1: none.
	relAvail int64
	relAt    time.Time

	trace func(Call) // SetTrace
}

// agentState is one agent's current attempt as the machine sees it.
type agentState struct {
	id       string
	wf       *trajectory.Workflow
	attempt  int
	started  bool
	start    time.Time
	hist     []predict.Completed
	slot     bool  // holds a static-N slot or a reservation
	reserve  int64 // its reservation
	paced    bool  // started under agent pacing
	needPeak int64 // predicted peak of the first action, -1 until computed
	floor    int64 // its sandbox's memory after its last action (Done.AfterBytes)
	rolled   int   // 1 + the index of the action of this attempt the hold rolled back last; 0: none (hold_rollback.go)
	rolling  bool  // the hold rolled back its admitted action, not ended yet
	idleCut  bool  // the hold preempted this attempt while it ran no action (idleVictim)

	// the action waiting for admission or running
	index    int
	act      *trajectory.Action
	sandbox  string
	ticket   *admission.Ticket
	enq      time.Time
	seq      uint64
	peak     int64   // predicted peak (after what retries learned)
	task     TaskKey // the action's key in the task reserve
	hasTask  bool    // task is set (the reserve is on and the action names a command)
	before   int64   // sandbox memory when admitted
	charge   int64
	admIdx   int // index in admitted, -1 when not admitted
	actStart time.Time
}

// Observer is what a host lets the machine read at the moment of an event:
// the domain's available memory and a sandbox's current memory. The
// simulator answers from its model, the live adapter from the domain's
// cgroup and the backend's stats.
type Observer interface {
	Available() int64
	// Memory is the sandbox's memory in bytes; ok is false when it cannot be read.
	Memory(sandbox string) (bytes int64, ok bool)
}

// Grant is an admission: the action may run.
type Grant struct {
	Agent  string
	Charge int64 // bytes charged against the budget until ActionDone
	Peak   int64 // the action's predicted peak growth, bytes (admission's physical need)
	Heavy  bool
	// Limit, when > 0, is a memory.high limit the host puts on the sandbox
	// for this action and lifts at ActionDone (AgentCgroup's Low actions).
	Limit int64
}

// Done is what an admitted action did, measured by the host.
type Done struct {
	Index     int
	PeakBytes int64 // sandbox peak during the action
	AvgBytes  int64 // time-average sandbox memory during the action
	Duration  time.Duration
	OOM       bool // killed by the OOM killer
	Lost      bool // could not run at all (sandbox gone); nothing is learned
	// AfterBytes is the sandbox's memory once the action ended: what it
	// keeps while its agent waits (its floor). 0 when unknown.
	AfterBytes int64
}

// NewMachine checks cfg and returns a machine in its initial state.
func NewMachine(cfg Config) (*Machine, error) {
	if cfg.Name == "" {
		return nil, fmt.Errorf("%w: a policy needs a name", ErrBadOption)
	}
	if cfg.Budget <= 0 && (cfg.Reservation || cfg.Gate || cfg.Admission) {
		return nil, fmt.Errorf("%w: %s needs a memory budget", ErrBadOption, cfg.Name)
	}
	if cfg.StaticN < 0 || cfg.ReserveMargin < 0 || cfg.Margin < 0 {
		return nil, fmt.Errorf("%w: %s: N, margins must be >= 0", ErrBadOption, cfg.Name)
	}
	cfg.GateConfig = GateConfigFor(cfg.GateConfig, cfg.Budget)
	if err := cfg.GateConfig.Validate(); err != nil {
		return nil, fmt.Errorf("%w: gate: %v", ErrBadOption, err)
	}
	m := &Machine{cfg: cfg, relAvail: -1, agents: map[string]*agentState{}, learned: RetryReserve{}, taskLearned: TaskReserve{},
		tickets: map[*admission.Ticket]*agentState{}, thresh: cfg.GateConfig.ThresholdsFor(cfg.Budget),
		available: cfg.Budget}
	if cfg.Admission {
		if cfg.Model == nil {
			return nil, fmt.Errorf("%w: admission needs a predictor", ErrBadOption)
		}
		if cfg.AdmissionConfig.Budget == 0 {
			cfg.AdmissionConfig.Budget = cfg.Budget
			m.cfg.AdmissionConfig.Budget = cfg.Budget
		}
		m.cfg.Margin = AdmissionMargin(cfg.Margin, cfg.Budget, cfg.GateConfig)
		switch {
		case cfg.LightMargin == 0 || cfg.LightMargin > m.cfg.Margin:
			m.cfg.LightMargin = m.cfg.Margin
		case cfg.LightMargin < 0:
			m.cfg.LightMargin = 0
		}
		m.adm = admission.New(cfg.AdmissionConfig, func() time.Time { return m.now })
	}
	if cfg.Gate {
		gc := cfg.GateConfig
		gc.HeldBudget = cfg.HeldBudget && cfg.Hold > 0
		m.gate = gate.New(gc)
	}
	if cfg.Hold > 0 {
		maxWait := cfg.HoldMaxWait
		if maxWait == 0 {
			maxWait = HoldMaxWait(cfg.Hold)
		}
		m.hold = &OOMHold{Timeout: cfg.Hold, MaxWait: maxWait}
	}
	return m, nil
}

// Config returns the machine's configuration, defaults filled.
func (m *Machine) Config() Config { return m.cfg }

// Name is the policy's name.
func (m *Machine) Name() string { return m.cfg.Name }

// SetModel replaces the predictor admission uses (a host that learns
// online swaps in each retrained model). Actions that become ready from now
// on are predicted by p; actions already queued or admitted keep their
// predictions. It fails on a machine without admission or with a nil p.
func (m *Machine) SetModel(p predict.Predictor) error {
	if m.adm == nil {
		return fmt.Errorf("%w: %s: no admission, no predictor to replace", ErrBadOption, m.cfg.Name)
	}
	if p == nil {
		return fmt.Errorf("%w: %s: nil predictor", ErrBadOption, m.cfg.Name)
	}
	m.cfg.Model = p
	return nil
}

// HoldArmed reports whether the machine runs the OOM hold (a hold timeout
// is set, as the registry does for the gate policies, and the host has not
// disabled it).
func (m *Machine) HoldArmed() bool { return m.hold != nil }

// WantsThreads reports whether the next Sample's observation needs the
// sandboxes' blocked threads (gate.Sample.Blocked): only the OOM hold's
// progress signal reads them (holdRest: resting, stuck), and only while
// the hold waits (tasks wait for memory under it, or the freezing hold
// holds sandboxes), which begins with the domain under OOM (v1) or above
// the hold line (v2), the observation's UnderOOM and AboveHoldLine. Where
// it is false a host may leave Blocked unknown (-1, or 0 for a frozen
// sandbox): reading every thread's state of every sandbox was a third of
// the live controller's CPU (internal/sandbox/process, Backend.Sample).
func (m *Machine) WantsThreads(underOOM, aboveLine bool) bool {
	return m.hold != nil && (underOOM || aboveLine || m.hold.state == holdWaiting || m.freeze != nil && m.freeze.holding())
}

// DisableHold turns the OOM hold off: the host has none (the fake
// backend, a domain without memory.oom_control or memory.high) or could
// not arm it.
func (m *Machine) DisableHold() {
	m.hold, m.freeze, m.preempt = nil, nil, false
	if m.gate != nil {
		m.gate.SetHeldBudget(false)
	}
}

// SetHoldFreeze makes the OOM hold a freezing one (hold_freeze.go): the
// host's hold slows allocators without stopping them (cgroup v2's
// memory.high), so the machine stops them by denying their sandboxes while
// they wait. A machine without the hold ignores it.
func (m *Machine) SetHoldFreeze() {
	if m.hold != nil && m.freeze == nil {
		m.freeze = &holdFreezer{}
	}
}

// HoldStats returns what the OOM hold did so far.
func (m *Machine) HoldStats() HoldStats {
	if m.hold == nil {
		return HoldStats{}
	}
	st := m.hold.Stats()
	if m.freeze != nil {
		st.Froze = m.freeze.froze
	}
	st.Thawed = uint64(m.holdThawed)
	return st
}

// FreeShare is the domain's available memory at the last sample as a
// share of the budget (residency's plentiful rule, DecideReclaim); -1
// before the first sample or without a budget.
func (m *Machine) FreeShare() float64 {
	if m.cfg.Budget <= 0 || !m.sampled {
		return -1
	}
	return float64(m.available) / float64(m.cfg.Budget)
}

// ReclaimNeed is the memory, bytes, residency's pressure reclaims should
// free (DecideReclaim's need) as of the last sample: what takes the
// projected free memory (available less the permitted sandboxes'
// projected demand, the gate's RPrev; without a gate, available) up to
// the yellow line, out of pressure, or, while actions wait for admission,
// up to the smallest waiting action's predicted peak above the margin,
// whichever is more. -1 before the first sample or without a budget.
func (m *Machine) ReclaimNeed() int64 {
	if m.cfg.Budget <= 0 || !m.sampled {
		return -1
	}
	projected := m.available - m.rprev
	need := m.thresh.Yellow - projected
	var peak int64 = -1
	for _, a := range m.tickets {
		if peak < 0 || a.peak < peak {
			peak = a.peak
		}
	}
	if peak >= 0 {
		need = max(need, peak+m.cfg.Margin-projected)
	}
	return max(need, 0)
}

// Pressure is the gate's pressure at its last step or, without a gate, the
// classification of the domain's available memory at the last sample.
func (m *Machine) Pressure() gate.Pressure {
	if m.gate != nil {
		return m.pressure
	}
	return m.thresh.Classify(m.available, 0)
}

// Waiting is the number of actions waiting for admission.
func (m *Machine) Waiting() int { return len(m.tickets) }

// Queued is the number of attempts waiting to start.
func (m *Machine) Queued() int { return len(m.queue) }

// Running is the number of admitted actions.
func (m *Machine) Running() int { return len(m.admitted) }

// Active is the number of attempts started under agent pacing.
func (m *Machine) Active() int { return m.active }

// Submit queues an attempt of agent id (attempt counts from 1) running wf
// and returns the agents that may start now (possibly id), in arrival order.
// An attempt whose workflow's profiled peak exceeds the budget is refused
// with an error wrapping trajectory.ErrInfeasible.
func (m *Machine) Submit(now time.Time, id string, attempt int, wf *trajectory.Workflow, obs Observer) (started []string, err error) {
	m.now = now
	c, obs := m.begin(Call{Kind: "submit", T: now, Agent: id, Attempt: attempt}, obs)
	defer func() {
		if c != nil {
			c.Started = started
			if err != nil {
				c.Err = err.Error()
			}
		}
		m.end(c)
	}()
	if a := m.agents[id]; a != nil {
		return nil, fmt.Errorf("%w: %s: agent %s already has an attempt", ErrBadOption, m.cfg.Name, id)
	}
	if wf != nil {
		// An attempt that can never fit the budget is not started: every
		// policy would only collect its OOM kills (trajectory.ErrInfeasible).
		if err := wf.Feasible(m.cfg.Budget); err != nil {
			return nil, err
		}
	}
	a := &agentState{id: id, wf: wf, attempt: attempt, admIdx: -1, needPeak: -1}
	if m.cfg.Reservation {
		a.reserve = m.cfg.ReserveMargin
		if wf != nil {
			a.reserve += int64(math.Ceil(wf.ProfiledPeakMiB() * float64(units.MiB)))
		}
	}
	m.agents[id] = a
	m.queue = append(m.queue, a)
	return m.startAgents(obs), nil
}

// startAgents starts queued attempts as the policy's agent-level limit
// allows: static-N slots or agent-reservation, head of line first; agent
// pacing (with admission), every queued attempt that fits; else all.
func (m *Machine) startAgents(obs Observer) []string {
	if len(m.queue) == 0 {
		return nil
	}
	if m.adm != nil {
		return m.pace(obs)
	}
	var out []string
	for len(m.queue) > 0 {
		a := m.queue[0]
		switch {
		case m.cfg.StaticN > 0 && m.slotsUsed >= m.cfg.StaticN:
			return out
		case m.cfg.Reservation && m.slotsUsed > 0 && m.reserved+a.reserve > m.cfg.Budget:
			return out
		}
		m.queue = m.queue[1:]
		if m.cfg.StaticN > 0 || m.cfg.Reservation {
			a.slot = true
			m.slotsUsed++
			m.reserved += a.reserve
		}
		m.startAttempt(a)
		out = append(out, a.id)
	}
	return out
}

// pace is agent pacing (AgentMayStart) with floors and CPU (cpuFull,
// checked before each start): every queued attempt that may start does,
// in arrival order. The headroom is read once per
// pass, less the floors the started agents' sandboxes do not hold now
// (paged out or torn down: they come back before their next action,
// OwedFloors); each attempt started takes its predicted floor
// (PredictFloor) from it, the memory its sandbox will keep while it
// waits.
func (m *Machine) pace(obs Observer) []string {
	p := m.Pressure()
	blocking := 0 // outside green pacing is closed anyway (PacingOpen)
	if p == gate.Green && m.pacingBlocked(obs) {
		blocking = 1
	}
	if !PacingOpen(m.active, blocking, p) {
		return nil
	}
	headroom, read := int64(0), false
	headroomOnce := func() int64 {
		if !read {
			headroom, read = m.paceHeadroom(obs, 0), true
		}
		return headroom
	}
	floor := m.predictFloor()
	kept := m.queue[:0]
	var out []string
	for _, a := range m.queue {
		if a.needPeak < 0 {
			a.needPeak = 0
			if a.wf != nil && len(a.wf.Actions) > 0 {
				a.needPeak = FirstPeak(m.cfg.Model, a.id, &a.wf.Actions[0])
			}
		}
		if m.active > 0 && m.cpuFull() {
			kept = append(kept, a)
			continue
		}
		if AgentMayStart(m.active, blocking, p, headroomOnce, a.needPeak+floor, m.cfg.AgentReserve) {
			headroom -= floor
			m.firstPeaks = keepLast(append(m.firstPeaks, a.needPeak), floorHistory)
			a.paced = true
			m.active++
			m.startAttempt(a)
			out = append(out, a.id)
		} else {
			kept = append(kept, a)
		}
	}
	clear(m.queue[len(kept):])
	m.queue = kept
	return out
}

// pacingBlocked reports whether an action waiting for admission closes
// agent pacing (PacingOpen): a light one, or a heavy one that would fit
// once the running actions ended. It stops at the first.
func (m *Machine) pacingBlocked(obs Observer) bool {
	drained := int64(-1)
	for t, a := range m.tickets {
		if !t.Heavy() {
			return true
		}
		if drained < 0 {
			drained = max(obs.Available()-m.cfg.Margin, 0)
			for ad := range m.admittedNow(obs) {
				drained += max(ad.Memory-ad.Before, 0)
			}
		}
		if a.peak <= drained {
			return true
		}
	}
	return false
}

// paceHeadroom is pacing's headroom: the physical headroom less the
// floors reclaimed sandboxes take back (owedFloors), each started agent's
// floor counted as at least atLeast.
func (m *Machine) paceHeadroom(obs Observer, atLeast int64) int64 {
	return m.physicalHeadroom(obs) - m.owedFloors(obs, atLeast)
}

// keepLast is s without all but its last n elements.
func keepLast(s []int64, n int) []int64 {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// owedFloors sums OwedFloor over the started agents between actions,
// each owing its measured floor or atLeast, the larger (0: the measured
// floor only).
func (m *Machine) owedFloors(obs Observer, atLeast int64) int64 {
	var owed int64
	for _, a := range m.started {
		if f := max(a.floor, atLeast); f > 0 && a.act == nil {
			mem, ok := obs.Memory(a.sandbox)
			owed += OwedFloor(f, mem, ok)
		}
	}
	return owed
}

// predictFloor is PredictFloor over the ended attempts and the started
// ones.
func (m *Machine) predictFloor() int64 {
	var live []int64
	for _, a := range m.started {
		if a.floor > 0 {
			live = append(live, a.floor)
		}
	}
	return PredictFloor(m.ended, live)
}

// startAttempt marks a's attempt started now.
func (m *Machine) startAttempt(a *agentState) {
	a.started, a.start, a.hist, a.floor, a.rolled = true, m.now, nil, 0, 0
	m.started = append(m.started, a)
}

// Withdraw abandons agent id's attempt wherever it is (queued, waiting for
// admission, or started) and returns the agents that may start now. It is
// AgentEnd for an attempt that never reached it, and safe to call twice.
func (m *Machine) Withdraw(now time.Time, id string, obs Observer) []string {
	return m.agentEnd("withdraw", now, id, obs)
}

// AgentEnd ends agent id's attempt: its slot, reservation or pacing count
// and its prediction history are released, and an action it had waiting
// or admitted is dropped. It returns the agents that may start now.
func (m *Machine) AgentEnd(now time.Time, id string, obs Observer) []string {
	return m.agentEnd("end", now, id, obs)
}

func (m *Machine) agentEnd(kind string, now time.Time, id string, obs Observer) (started []string) {
	m.now = now
	c, obs := m.begin(Call{Kind: kind, T: now, Agent: id}, obs)
	defer func() {
		if c != nil {
			c.Started = started
		}
		m.end(c)
	}()
	a := m.agents[id]
	if a == nil {
		return nil
	}
	delete(m.agents, id)
	if !a.started {
		for i, q := range m.queue {
			if q == a {
				m.queue = append(m.queue[:i], m.queue[i+1:]...)
				break
			}
		}
		return m.startAgents(obs)
	}
	m.dropAction(a)
	if i := slices.Index(m.started, a); i >= 0 {
		m.started = slices.Delete(m.started, i, i+1)
	}
	if a.floor > 0 {
		m.ended = keepLast(append(m.ended, a.floor), floorHistory)
	}
	if a.slot {
		a.slot = false
		m.slotsUsed--
		m.reserved -= a.reserve
	}
	if a.paced {
		a.paced = false
		m.active--
	}
	if m.adm != nil {
		return nil // agent pacing runs at the next Tick, after admission
	}
	return m.startAgents(obs)
}
