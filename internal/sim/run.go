package sim

import (
	"context"
	"fmt"
	"time"

	"github.com/tenon-dev/tenon/internal/admission"
	"github.com/tenon-dev/tenon/internal/gate"
	"github.com/tenon-dev/tenon/internal/policy"
)

// epoch is the wall-clock time the decision code sees at simulated time 0.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// sim is one run's state.
type sim struct {
	cfg    Config
	now    time.Duration
	q      queue
	h      *host
	agents []*agent
	left   int // workflows not yet completed or failed

	gate     *gate.Controller
	pressure gate.Pressure
	thresh   gate.Thresholds
	adm      *admission.Admitter
	tickets  map[*admission.Ticket]*agent
	waiting  int  // tickets waiting in admission
	kick     bool // something happened that may let a waiting ticket in
	// lastSched is the last admission Schedule call (-1: none); schedPending
	// says an evSchedule is queued.
	lastSched    time.Duration
	schedPending bool
	admitted     []*agent // agents holding an admitted ticket
	seq          uint64   // tickets enqueued
	// learned is what earlier attempts of each action needed.
	learned policy.RetryReserve
	active  int // attempts that passed agent pacing and have not ended

	slotQueue []*agent // FIFO of attempts waiting for a slot
	slotsUsed int
	reserved  int64
	lifeUsed  int      // residency lifecycle operations in flight
	blocked   []*agent // rematerializations waiting for pressure or a slot

	running int // actions executing

	oomAt time.Duration // the pending OOM check, -1 when none

	// The domain's OOM hold (hold.go): hold is nil when it is off; armed
	// says allocations past the budget wait rather than OOM-kill.
	hold    *policy.OOMHold
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

// newSim sets up a run of cfg: the decision code, the agents and the first
// events.
func newSim(cfg Config) (*sim, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &sim{cfg: cfg, h: newHost(cfg.Budget), left: len(cfg.Workflows), oomAt: -1, lastSched: -1,
		tickets: map[*admission.Ticket]*agent{}, learned: policy.RetryReserve{}}
	s.res = Result{Policy: cfg.Policy.Name, Budget: cfg.Budget, Horizon: cfg.Horizon}
	s.thresh = cfg.Gate.ThresholdsFor(cfg.Budget)
	clock := func() time.Time { return epoch.Add(s.now) }
	sp := cfg.Policy
	if sp.Gate {
		s.gate = gate.New(cfg.Gate)
	}
	if d := holdTimeout(cfg); d > 0 {
		s.hold, s.armed = &policy.OOMHold{Timeout: d, MaxWait: policy.HoldMaxWait(d)}, true
	}
	if sp.Admission {
		if cfg.Predictors == nil {
			p, err := NewPredictors(cfg.Workflows, PredictorOptions{Kinds: []string{sp.Predictor}})
			if err != nil {
				return nil, err
			}
			cfg.Predictors = p
			s.cfg.Predictors = p
		}
		s.adm = admission.New(cfg.Admission, clock)
	}
	for i := range cfg.Workflows {
		wf := &cfg.Workflows[i]
		ag := &agent{wf: wf, admIdx: -1, firstPeak: -1, res: WorkflowResult{ID: wf.ID, Submit: secs(wf.Arrival), Started: -1}}
		for _, a := range wf.Actions {
			ag.prof = append(ag.prof, profileOf(a))
		}
		if sp.Admission {
			if ag.pred = cfg.Predictors.For(sp.Predictor, wf.ID); ag.pred == nil {
				return nil, fmt.Errorf("%w: no %s predictor", ErrBadConfig, sp.Predictor)
			}
		}
		ag.reserve = mib(wf.ProfiledPeakMiB()) + cfg.SandboxBase
		s.agents = append(s.agents, ag)
		s.q.push(&event{t: ag.res.Submit, kind: evArrive, ag: ag})
	}
	if sp.Gate || sp.Residency || sp.Admission {
		s.q.push(&event{t: 0, kind: evGateSample})
	}
	s.q.push(&event{t: 0, kind: evRecord})
	return s, nil
}

// run processes events until every workflow is done or the horizon.
func (s *sim) run(ctx context.Context) (*Result, error) {
	cfg := s.cfg
	start := time.Now()
	for s.left > 0 && s.q.len() > 0 {
		ev := s.q.pop()
		if ev.t > cfg.Horizon {
			s.stall()
			break
		}
		s.now = ev.t
		s.handle(ev)
		s.after()
		s.res.Events++
		if s.res.Events%4096 == 0 && ctx.Err() != nil {
			return nil, fmt.Errorf("simulating %s: %w", cfg.Policy.Name, ctx.Err())
		}
		if cfg.Observe != nil {
			cfg.Observe(s.h.accounting(s.now))
		}
	}
	s.res.Wall = time.Since(start)
	if s.left > 0 && s.q.len() == 0 {
		return nil, fmt.Errorf("sim: %d workflows never finished (internal error)", s.left)
	}
	for _, ag := range s.agents {
		s.res.Workflows = append(s.res.Workflows, ag.res)
		s.res.Makespan = max(s.res.Makespan, ag.res.End)
	}
	s.res.PeakBytes = s.h.peak
	s.holdResult()
	return &s.res, nil
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
		s.at(s.cfg.RecordEvery, evRecord, nil, nil)
	case evTimeout:
		if ev.gen == ev.ag.gen && ev.ag.phase == phRunning && ev.ag.started == ev.t-s.cfg.ActionTimeout {
			s.timeout(ev.ag)
		}
	case evSchedule:
		s.schedPending, s.kick = false, true
	case evOOMCheck:
		if ev.t == s.oomAt {
			s.oomAt = -1
			s.h.advanceAll(s.now)
		}
	}
}

// admitCoalesce is the shortest interval between admission Schedule calls:
// kicks closer together are served together at the end of the interval
// (the live admitter's loop also batches kicks).
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
	if s.adm != nil && s.waiting > 0 && s.kick {
		switch next := s.lastSched + admitCoalesce; {
		case s.now >= next || s.lastSched < 0:
			s.lastSched = s.now
			s.schedule()
		case !s.schedPending:
			s.schedPending = true
			s.q.push(&event{t: next, kind: evSchedule})
		}
	}
	if s.adm != nil && s.kick && len(s.slotQueue) > 0 {
		s.tryPace()
	}
	s.kick = false
	if tc := s.h.crossing(s.now, s.limit()); tc >= 0 && (s.oomAt < 0 || tc < s.oomAt) {
		s.oomAt = tc
		s.q.push(&event{t: tc, kind: evOOMCheck})
	}
}

// pressureNow is the gate's last pressure, or without a gate the
// classification of the current available memory.
func (s *sim) pressureNow() gate.Pressure {
	if s.gate != nil {
		return s.pressure
	}
	return s.thresh.Classify(s.cfg.Budget-s.h.projected(s.now), 0)
}

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
