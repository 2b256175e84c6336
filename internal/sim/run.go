package sim

import (
	"context"
	"fmt"
	"time"

	"github.com/tenon-dev/tenon/internal/gate"
	"github.com/tenon-dev/tenon/internal/policy"
	"github.com/tenon-dev/tenon/internal/predict"
	"github.com/tenon-dev/tenon/internal/trajectory"
)

// epoch is the wall-clock time the decision code sees at simulated time 0.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// sim is one run's state: the simulated host (the event heap, the
// sandboxes' memory, the OOM hold's waiters, lifecycle operations) around
// the policy's decision core, policy.Machine, which it drives exactly as
// the live adapter (internal/live) does.
type sim struct {
	cfg    Config
	now    time.Duration
	q      queue
	h      *host
	agents []*agent
	byID   map[string]*agent
	left   int // workflows not yet completed or failed

	m *policy.Machine
	// waits predicts each agent's model waits from its earlier ones, as
	// the daemon's learner does (residency's IdleSandbox.PredictedWait).
	waits *policy.WaitModel
	kick  bool // something happened that may let a waiting action or agent in
	// lastSched is the last admission Schedule call (-1: none); schedPending
	// says an evSchedule is queued.
	lastSched    time.Duration
	schedPending bool

	lifeUsed int      // residency lifecycle operations in flight
	blocked  []*agent // rematerializations waiting for pressure or a slot
	// pagingIn are admitted agents whose paged-out sandbox waits for room
	// to fault back (retried every gate period).
	pagingIn []*agent

	running int // actions executing

	oomAt time.Duration // the pending OOM check, -1 when none

	// The domain's OOM hold (hold.go): armed says allocations past the
	// budget wait rather than OOM-kill.
	armed   bool
	waiters []waiter

	res Result
}

// Run simulates cfg and returns the result. It checks ctx every few
// thousand events and returns its error when cancelled.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	s, err := newSim(cfg)
	if err != nil {
		return nil, err
	}
	return s.run(ctx)
}

// newSim sets up a run of cfg: the decision core, the agents and the first
// events.
func newSim(cfg Config) (*sim, error) {
	s, err := newNode(cfg)
	if err != nil {
		return nil, err
	}
	for i := range s.cfg.Workflows {
		wf := &s.cfg.Workflows[i]
		if err := s.add(wf, secs(wf.Arrival)); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// newNode sets up a host running cfg's policy with no agent yet (add
// brings them): the decision core, trained on cfg.Workflows unless
// cfg.Predictors is set, and the periodic events.
func newNode(cfg Config) (*sim, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &sim{cfg: cfg, h: newHost(cfg.Budget), oomAt: -1, lastSched: -1, byID: map[string]*agent{},
		waits: policy.NewWaitModel()}
	s.res = Result{Policy: cfg.Policy.Name, Budget: cfg.Budget, Horizon: cfg.Horizon}
	sp := cfg.Policy
	if sp.Admission && cfg.Predictors == nil {
		p, err := NewPredictors(cfg.Workflows, PredictorOptions{Kinds: []string{sp.Predictor}})
		if err != nil {
			return nil, err
		}
		cfg.Predictors = p
		s.cfg.Predictors = p
	}
	pc, err := MachineConfig(cfg)
	if err != nil {
		return nil, err
	}
	if s.m, err = policy.NewMachine(pc); err != nil {
		return nil, err
	}
	s.m.SetTrace(cfg.Trace)
	s.armed = s.m.HoldArmed()
	if cfg.V2 {
		s.m.SetHoldFreeze() // as the live policy on a v2 domain (a no-op without the hold)
	}
	s.m.SetHoldPreempt()     // a host that restarts preempted attempts, as the replay (a no-op without the hold)
	s.m.SetHoldPreemptIdle() // running or not
	s.m.SetHoldRollback()    // a host that rolls actions back to their boundary (a no-op without the hold or admission)
	if sp.Gate || sp.Residency || sp.Admission {
		s.q.push(&event{t: 0, kind: evGateSample})
	}
	s.q.push(&event{t: 0, kind: evRecord})
	return s, nil
}

// add brings workflow wf to the host: its first attempt arrives at
// simulated time at (not before the host's now).
func (s *sim) add(wf *trajectory.Workflow, at time.Duration) error {
	if _, dup := s.byID[wf.ID]; dup {
		return fmt.Errorf("%w: workflow id %q appears twice", ErrBadConfig, wf.ID)
	}
	ag := &agent{wf: wf, res: WorkflowResult{ID: wf.ID, Submit: max(at, s.now), Started: -1}}
	for _, a := range wf.Actions {
		ag.prof = append(ag.prof, profileOf(a))
	}
	s.byID[wf.ID] = ag
	s.agents = append(s.agents, ag)
	s.left++
	s.q.push(&event{t: ag.res.Submit, kind: evArrive, ag: ag})
	return nil
}

// MachineConfig is the configuration of the decision core a run of cfg
// drives: the live registry's (policy.Configure) with the simulator's
// settings on top: its gate, admission, margin, hold and agent-reserve
// values (whose defaults are the live ones, see Config.withDefaults), the
// sampled or live predictors (cfg.Predictors, or trained as Run does), and
// the sandbox base memory as agent-reservation's margin.
func MachineConfig(cfg Config) (policy.Config, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return policy.Config{}, err
	}
	if cfg.Policy.Admission && cfg.Predictors == nil {
		if cfg.Predictors, err = NewPredictors(cfg.Workflows, PredictorOptions{Kinds: []string{cfg.Policy.Predictor}}); err != nil {
			return policy.Config{}, err
		}
	}
	return machineConfig(cfg)
}

// machineConfig is MachineConfig for a cfg with its defaults and predictors.
func machineConfig(cfg Config) (policy.Config, error) {
	opts := policy.Options{Budget: cfg.Budget, Workflows: recordedWorkflows(cfg.Workflows)}
	if cfg.Policy.Admission {
		if cfg.Predictors.byKnd[cfg.Policy.Predictor] == ([2]predict.Predictor{}) {
			return policy.Config{}, fmt.Errorf("%w: no %s predictor", ErrBadConfig, cfg.Policy.Predictor)
		}
		opts.Predictor = foldPredictor{p: cfg.Predictors, kind: cfg.Policy.Predictor}
	}
	pc, err := policy.Configure(cfg.Policy, opts)
	if err != nil {
		return policy.Config{}, err
	}
	pc.GateConfig, pc.AdmissionConfig, pc.Margin, pc.LightMargin, pc.AgentReserve = cfg.Gate, cfg.Admission, cfg.Margin, cfg.LightMargin, cfg.AgentReserve
	// The simulator's own hold timeout (hold=) and its action timeout set
	// the hold's bound here, not Configure's.
	pc.Hold, pc.HeldBudget, pc.NoTaskReserve, pc.NoRollback = holdTimeout(cfg), !cfg.NoHeldBudget, cfg.NoTaskReserve, cfg.NoRollback
	switch {
	case cfg.HoldMaxWait != 0:
		pc.HoldMaxWait = cfg.HoldMaxWait
	case pc.Hold > 0:
		pc.HoldMaxWait = policy.HoldMaxWaitFor(pc.Hold, max(cfg.ActionTimeout, 0))
	}
	if cfg.Policy.Reservation {
		pc.ReserveMargin = cfg.SandboxBase
	}
	return pc, nil
}

// Available is the machine's view of the domain's free memory (policy.Observer).
func (s *sim) Available() int64 { return s.cfg.Budget - s.h.projected(s.now) }

// Memory is a sandbox's memory now (policy.Observer).
func (s *sim) Memory(id string) (int64, bool) {
	sb := s.h.byID[id]
	if sb == nil {
		return 0, false
	}
	s.h.advance(sb, s.now)
	return sb.mem, true
}

// clock is the simulated time as the decision core sees it.
func (s *sim) clock() time.Time { return epoch.Add(s.now) }

// run processes events until every workflow is done or the horizon.
func (s *sim) run(ctx context.Context) (*Result, error) {
	start := time.Now()
	for s.left > 0 && s.q.len() > 0 {
		if !s.step() {
			break
		}
		if s.res.Events%4096 == 0 && ctx.Err() != nil {
			return nil, fmt.Errorf("simulating %s: %w", s.cfg.Policy.Name, ctx.Err())
		}
	}
	s.res.Wall = time.Since(start)
	if s.left > 0 && s.q.len() == 0 {
		return nil, fmt.Errorf("sim: %d workflows never finished (internal error)", s.left)
	}
	return s.result(), nil
}

// step processes the next event; past the horizon it fails every
// unfinished workflow instead and returns false.
func (s *sim) step() bool {
	ev := s.q.pop()
	if ev.t > s.cfg.Horizon {
		s.stall()
		return false
	}
	s.now = ev.t
	s.handle(ev)
	s.after()
	s.res.Events++
	if s.cfg.Observe != nil {
		s.cfg.Observe(s.h.accounting(s.now))
	}
	return true
}

// next is the time of the next event, false when there is none.
func (s *sim) next() (time.Duration, bool) {
	if s.q.len() == 0 {
		return 0, false
	}
	return s.q.h[0].t, true
}

// result completes the run's Result with every workflow's fate.
func (s *sim) result() *Result {
	for _, ag := range s.agents {
		s.res.Workflows = append(s.res.Workflows, ag.res)
		s.res.Makespan = max(s.res.Makespan, ag.res.End)
	}
	s.res.PeakBytes = s.h.peak
	s.holdResult()
	s.res.LivenessAdmits = s.m.Stats().LivenessAdmits
	return &s.res
}

func (s *sim) at(d time.Duration, kind evKind, ag *agent, sb *sandbox) {
	e := &event{t: s.now + d, kind: kind, ag: ag, sb: sb}
	if ag != nil {
		e.gen = ag.gen
	}
	if sb != nil {
		e.gen = sb.gen
	}
	s.q.push(e)
}

func (s *sim) handle(ev *event) {
	switch ev.kind {
	case evArrive:
		s.enqueueAttempt(ev.ag)
	case evWaitEnd:
		if ev.gen == ev.ag.gen {
			s.waitEnd(ev.ag)
		}
	case evSandboxUp:
		if ev.gen == ev.sb.gen {
			s.sandboxUp(ev.sb)
		}
	case evTornDown:
		if ev.gen == ev.sb.gen {
			s.tornDown(ev.sb)
		}
	case evPhase:
		if ev.gen == ev.sb.gen {
			s.phase(ev.sb)
		}
	case evGateSample:
		s.sample()
		s.at(s.cfg.Gate.Period, evGateSample, nil, nil)
	case evRecord:
		s.res.Samples = append(s.res.Samples, Sample{T: s.now, MemBytes: s.h.projected(s.now),
			Running: s.running, Live: len(s.h.all)})
		s.recordIdle()
		s.at(s.cfg.RecordEvery, evRecord, nil, nil)
	case evTimeout:
		if ev.gen == ev.ag.gen && ev.ag.phase == phRunning && ev.ag.started == ev.t-s.cfg.ActionTimeout {
			s.timeout(ev.ag)
		}
	case evSchedule:
		s.schedPending, s.kick = false, true
	case evThawed:
		if ev.gen == ev.sb.gen && !ev.sb.frozen && ev.sb.state == sbLive {
			s.unfreeze(ev.sb)
		}
	case evPagedIn:
		if ev.gen != ev.ag.gen { // an attempt that ended (its faulting was reset then)
			break
		}
		ev.ag.faulting = false
		switch ev.ag.phase {
		case phEnsuring:
			s.ready(ev.ag)
		case phPagingIn:
			s.start(ev.ag)
		}
	case evOOMCheck:
		if ev.t == s.oomAt {
			s.oomAt = -1
			s.h.advanceAll(s.now)
		}
	}
}

// admitCoalesce is the shortest interval between admission Schedule calls:
// kicks closer together are served together at the end of the interval
// (the live adapter's admission loop also batches kicks).
const admitCoalesce = 10 * time.Millisecond

// after runs once per event: the OOM hold (growers at the budget wait,
// waiters go on when memory is free) or the OOM killer, admission, and the
// next OOM check. Admission is scheduled, as the live policy does, when a
// ticket is enqueued or released, and every control period, at most once
// per admitCoalesce.
func (s *sim) after() {
	s.h.peak = max(s.h.peak, min(s.h.projected(s.now), s.cfg.Budget))
	if s.armed {
		s.stopGrowers()
		s.wakeWaiters()
	}
	if s.h.used > s.cfg.Budget || s.h.projected(s.now) > s.cfg.Budget {
		s.h.advanceAll(s.now)
		for s.h.used > s.cfg.Budget {
			v := s.h.largest()
			if v == nil {
				break
			}
			s.oomKill(v)
		}
	}
	if s.m.Waiting() > 0 && s.kick {
		switch next := s.lastSched + admitCoalesce; {
		case s.now >= next || s.lastSched < 0:
			s.lastSched = s.now
			s.schedule()
		case !s.schedPending:
			s.schedPending = true
			s.q.push(&event{t: next, kind: evSchedule})
		}
	}
	if s.cfg.Policy.Admission && s.kick && s.m.Queued() > 0 {
		for _, id := range s.m.Pace(s.clock(), s) {
			s.startAttempt(s.byID[id])
		}
	}
	s.kick = false
	if tc := s.h.crossing(s.now, s.limit()); tc >= 0 && (s.oomAt < 0 || tc < s.oomAt) {
		s.oomAt = tc
		s.q.push(&event{t: tc, kind: evOOMCheck})
	}
}

// pressureNow is the decision core's pressure: the gate's, or without a
// gate the classification of the available memory at the last sample.
func (s *sim) pressureNow() gate.Pressure { return s.m.Pressure() }

// stall fails every unfinished workflow at the horizon.
func (s *sim) stall() {
	s.now = s.cfg.Horizon
	for _, ag := range s.agents {
		if ag.phase != phDone {
			ag.phase = phDone
			ag.res.End = s.now
			ag.res.Latency = s.now - ag.res.Submit
			s.res.Failed++
			s.res.Stalled++
			s.left--
		}
	}
}

// debugHost writes one line per sandbox holding memory: its memory, the
// running action's peak and progress, and whether it is frozen or waiting.
// Its callers have brought the host up to date.
func (s *sim) debugHost() {
	for _, sb := range s.h.all {
		act := "idle"
		if sb.act != nil {
			act = fmt.Sprintf("action peak=%dMiB progress=%v", sb.act.peak>>20, sb.progress.Round(time.Millisecond))
		}
		s.debugf("  %s mem=%dMiB floor=%dMiB frozen=%v oomWait=%v %s", sb.id, sb.mem>>20, sb.floor>>20, sb.frozen, sb.oomWait, act)
	}
}

// debugf traces a lifecycle event to Config.Debug.
func (s *sim) debugf(format string, args ...any) {
	if s.cfg.Debug != nil {
		s.cfg.Debug(fmt.Sprintf("%6.1f ", s.now.Seconds()) + fmt.Sprintf(format, args...))
	}
}

// recordIdle samples the memory of sandboxes that run nothing into
// IdleMemAvg (a running mean over the samples) and IdleMemPeak.
func (s *sim) recordIdle() {
	var idle int64
	for _, sb := range s.h.all {
		if sb.activeIdx < 0 {
			idle += sb.mem
		}
	}
	n := int64(len(s.res.Samples))
	s.res.IdleMemAvg += (idle - s.res.IdleMemAvg) / n
	s.res.IdleMemPeak = max(s.res.IdleMemPeak, idle)
}
