package policy

import (
	"context"
	"fmt"
	"iter"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tenon-dev/tenon/internal/admission"
	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/gate"
	"github.com/tenon-dev/tenon/internal/predict"
	"github.com/tenon-dev/tenon/internal/trajectory"
)

// admitPeriod is how often the admission scheduler re-checks its queues
// even without a completion (physical headroom changes as memory is freed).
const admitPeriod = 50 * time.Millisecond

// admitter is action admission (seed 000 §3.4): each ready action gets a
// descriptor from the predictor and waits in the water-level admitter until
// its logical charge fits the budget and the physical headroom allows it.
type admitter struct {
	pred predict.Predictor
	// margin is the physical safety margin in bytes, set by start from
	// configured (0: AdmissionMargin's default for the budget and gateCfg).
	margin     int64
	configured int64
	gateCfg    gate.Config // the gate's configuration, for the default margin
	// reserve is headroom a new agent leaves free beyond its first action:
	// room for one heavy action of the agents already running.
	reserve int64

	adm      *admission.Admitter
	env      controller.Env
	kick     chan struct{}
	stop     context.CancelFunc
	finished chan struct{}
	seq      atomic.Uint64

	mu     sync.Mutex
	agents map[string]*agentHistory // by agent id
	// waiting holds queued actions; schedule moves each admitted one to
	// running before the next Schedule call, so the physical check never
	// misses an action that was admitted but has not started.
	waiting map[*admission.Ticket]*runningAction
	running map[*admission.Ticket]*runningAction
	active  int // agents between agentReady and agentDone
	// learned is what earlier attempts of each action needed (see
	// RetryReserve).
	learned RetryReserve
}

// agentHistory is one attempt's completed actions, the predictor's history.
type agentHistory struct {
	attempt int
	start   time.Time
	done    []predict.Completed
}

// runningAction is an admitted action whose memory may not have
// materialized yet.
type runningAction struct {
	sandbox string
	before  int64 // sandbox memory when the action was admitted
	charge  int64
	peak    int64 // predicted peak above before
	enq     time.Time
	ticket  *admission.Ticket
	start   time.Time
}

func newAdmitter(pred predict.Predictor, margin int64) *admitter {
	return &admitter{pred: pred, configured: margin}
}

func (a *admitter) start(env controller.Env, cfg admission.Config) {
	if cfg.Budget == 0 {
		cfg.Budget = env.Budget
	}
	a.env = env
	a.margin = AdmissionMargin(a.configured, env.Budget, a.gateCfg)
	a.adm = admission.New(cfg, env.Clock.Now)
	a.kick = make(chan struct{}, 1)
	a.agents = map[string]*agentHistory{}
	a.waiting = map[*admission.Ticket]*runningAction{}
	a.learned = RetryReserve{}
	a.running = map[*admission.Ticket]*runningAction{}
	ctx, cancel := context.WithCancel(context.Background())
	a.stop, a.finished = cancel, make(chan struct{})
	go a.loop(ctx)
}

func (a *admitter) close() {
	if a.stop != nil {
		a.stop()
		<-a.finished
	}
}

func (a *admitter) loop(ctx context.Context) {
	defer close(a.finished)
	for {
		a.schedule(ctx)
		select {
		case <-ctx.Done():
			return
		case <-a.kick:
		case <-a.env.Clock.After(admitPeriod):
		}
	}
}

func (a *admitter) poke() {
	select {
	case a.kick <- struct{}{}:
	default:
	}
}

// physicalHeadroom is PhysicalHeadroom over the domain's available
// memory and the running admitted actions' current sandbox memory.
func (a *admitter) physicalHeadroom(ctx context.Context) int64 {
	avail := a.env.Budget
	if a.env.Domain != nil {
		if v, err := a.env.Domain.Available(); err == nil {
			avail = v
		}
	}
	a.mu.Lock()
	running := make([]runningAction, 0, len(a.running))
	for _, r := range a.running {
		running = append(running, *r)
	}
	a.mu.Unlock()
	admitted := func(yield func(Admitted) bool) {
		for _, r := range running {
			ad := Admitted{Before: r.before, Memory: r.before, Peak: r.peak, Charge: r.charge}
			if st, err := a.env.Backend.Stats(ctx, r.sandbox); err == nil {
				ad.Memory = st.Memory
			}
			if !yield(ad) {
				return
			}
		}
	}
	return PhysicalHeadroom(avail, a.margin, iter.Seq[Admitted](admitted))
}

func (a *admitter) schedule(ctx context.Context) {
	phys := a.physicalHeadroom(ctx)
	// Liveness (see LivenessHeadroom): the oldest queued action.
	now := a.env.Clock.Now()
	a.mu.Lock()
	var oldest *Queued
	for _, r := range a.waiting {
		if len(a.running) > 0 {
			break // LivenessHeadroom needs no oldest
		}
		if oldest == nil || r.enq.Before(oldest.Enqueued) {
			oldest = &Queued{Enqueued: r.enq, Peak: r.peak}
		}
	}
	phys = LivenessHeadroom(phys, len(a.running), oldest, now)
	a.mu.Unlock()
	admitted := a.adm.Schedule(phys)
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, t := range admitted {
		if r := a.waiting[t]; r != nil {
			delete(a.waiting, t)
			r.charge, r.ticket, r.start = t.Charge(), t, a.env.Clock.Now()
			a.running[t] = r
		}
	}
}

// agentReady blocks a new agent until agent pacing (AgentMayStart) lets it
// start, polling every admitPeriod.
func (a *admitter) agentReady(ctx context.Context, ag *controller.Agent, pressure func() gate.Pressure) error {
	need := FirstPeak(a.pred, ag.ID, ag.Action())
	headroom := func() int64 { return a.physicalHeadroom(ctx) }
	for {
		a.mu.Lock()
		queued, active := len(a.waiting), a.active
		a.mu.Unlock()
		p := gate.Green
		if pressure != nil && active > 0 && queued == 0 {
			p = pressure()
		}
		if AgentMayStart(active, queued, p, headroom, need, a.reserve) {
			a.mu.Lock()
			a.active++
			a.mu.Unlock()
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-a.env.Clock.After(admitPeriod):
		}
	}
}

// agentDone ends an agent started by agentReady.
func (a *admitter) agentDone() {
	a.mu.Lock()
	a.active--
	a.mu.Unlock()
	a.poke()
}

// history returns the agent's completed actions for its current attempt.
func (a *admitter) history(ag *controller.Agent) *agentHistory {
	a.mu.Lock()
	defer a.mu.Unlock()
	h := a.agents[ag.ID]
	if h == nil || h.attempt != ag.Attempt {
		h = &agentHistory{attempt: ag.Attempt, start: a.env.Clock.Now()}
		a.agents[ag.ID] = h
	}
	return h
}

// ready predicts the action, queues it and blocks until it is admitted.
func (a *admitter) ready(ctx context.Context, ag *controller.Agent, act *trajectory.Action, policyName string) (controller.Grant, error) {
	h := a.history(ag)
	now := a.env.Clock.Now()
	a.mu.Lock()
	hist := append([]predict.Completed(nil), h.done...)
	a.mu.Unlock()
	desc := a.pred.Predict(predict.ContextFor(ag.ID, *act, hist, now.Sub(h.start).Seconds()))
	a.mu.Lock()
	desc = a.learned.Apply(ActionKey{ag.ID, ag.Next}, desc)
	a.mu.Unlock()
	before := int64(0)
	if ag.SandboxID != "" {
		if st, err := a.env.Backend.Stats(ctx, ag.SandboxID); err == nil {
			before = st.Memory
		}
	}
	id := a.seq.Add(1)
	t := a.adm.Enqueue(admission.Request{ID: ag.ID + "/" + strconv.Itoa(ag.Next), Descriptor: desc, Enqueued: now})
	a.mu.Lock()
	a.waiting[t] = &runningAction{sandbox: ag.SandboxID, before: before, peak: desc.PredPeak, enq: now}
	a.mu.Unlock()
	a.poke()
	if err := a.adm.Wait(ctx, t); err != nil {
		a.mu.Lock()
		delete(a.waiting, t)
		a.mu.Unlock()
		return controller.Grant{}, err
	}
	a.mu.Lock()
	if r := a.waiting[t]; r != nil {
		// Admitted by a Schedule call whose result schedule has not
		// recorded yet: record it here.
		delete(a.waiting, t)
		r.charge, r.ticket, r.start = t.Charge(), t, a.env.Clock.Now()
		a.running[t] = r
	}
	a.mu.Unlock()
	return controller.Grant{ID: id, Charge: t.Charge(), Heavy: t.Heavy(), Token: t}, nil
}

// done releases the charge and records the measured outcome in the history.
func (a *admitter) done(ag *controller.Agent, g controller.Grant, o controller.Outcome) error {
	t, _ := g.Token.(*admission.Ticket)
	a.mu.Lock()
	r := a.running[t]
	delete(a.running, t)
	h := a.agents[ag.ID]
	a.mu.Unlock()
	if r == nil {
		return fmt.Errorf("admission: grant %d released twice or never admitted", g.ID)
	}
	err := a.adm.Release(r.ticket)
	a.poke()
	if o.Err == nil {
		a.mu.Lock()
		a.learned.Learn(ActionKey{ag.ID, o.Index}, max(o.PeakBytes-r.before, 0), r.peak, o.OOM)
		a.mu.Unlock()
	}
	if h != nil && h.attempt == ag.Attempt && o.Err == nil {
		act := ag.Action()
		c := predict.Completed{
			PeakBytes:  max(o.PeakBytes-r.before, 0),
			AvgBytes:   max(o.AvgBytes-r.before, 0),
			DurationS:  o.Duration.Seconds(),
			EndOffsetS: a.env.Clock.Now().Sub(h.start).Seconds(),
		}
		if act != nil {
			c.Class, c.Command = act.Class, act.Command
		}
		a.mu.Lock()
		h.done = append(h.done, c)
		a.mu.Unlock()
	}
	return err
}

// forget drops an agent's history when its attempt ends.
func (a *admitter) forget(ag *controller.Agent) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if h := a.agents[ag.ID]; h != nil && h.attempt == ag.Attempt {
		delete(a.agents, ag.ID)
	}
}

// needs returns, per sandbox running an admitted action, its memory when
// the action was admitted and its predicted peak above that.
func (a *admitter) needs() map[string][2]int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make(map[string][2]int64, len(a.running))
	for _, r := range a.running {
		if r.sandbox != "" {
			out[r.sandbox] = [2]int64{r.before, max(r.peak, r.charge)}
		}
	}
	return out
}

// status is the admitter's current state, for status views and tests.
func (a *admitter) status() admission.Status { return a.adm.Snapshot() }
