package replay

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/sandbox"
	"github.com/tenon-dev/tenon/internal/trajectory"
)

// stopTimeout bounds Policy.Stop and sandbox cleanup after the run.
const stopTimeout = 30 * time.Second

// runner is one Run's state.
type runner struct {
	cfg  Config
	wfs  []trajectory.Workflow // scaled
	rec  *recorder
	live controller.LiveSet
	mgr  controller.Sandboxes
	step *controller.Step // runs each action through the policy

	mu  sync.Mutex
	seq int // sandbox sequence number

	progressMu sync.Mutex // serializes Progress calls
	done       int
	progress   func(done, total int)
}

// Run replays c.Workflows and returns what happened. It returns an error
// only when the run could not start (bad config, Policy.Start failed) or
// the event log could not be written; workflow failures are in the Result.
// Cancelling ctx fails the workflows still running and returns promptly
// with a Result that accounts for every workflow, marked Interrupted.
func Run(ctx context.Context, c Config) (*Result, error) {
	c, err := c.withDefaults()
	if err != nil {
		return nil, err
	}
	start := c.Clock.Now()
	r := &runner{cfg: c, wfs: Scale(c.Workflows, c.TimeScale), rec: newRecorder(c, start), progress: c.Progress}

	r.rec.emit(controller.Event{Kind: controller.EventRunStart, BudgetBytes: c.Budget, TimeScale: c.TimeScale, Workflows: len(r.wfs)})
	env := controller.Env{
		Clock: c.Clock, Budget: c.Budget, Domain: c.Domain, Backend: c.Backend,
		Live: r.live.List, Emit: r.rec.emit, Logger: c.Logger.With("policy", c.Policy.Name()),
		RestartsPreempted: true,
		PreemptsIdle:      true,
		RerunsRolledBack:  true,
	}
	if err := c.Policy.Start(ctx, env); err != nil {
		return nil, fmt.Errorf("starting policy %s: %w", c.Policy.Name(), err)
	}
	host := controller.SandboxHost{Backend: c.Backend, Spec: r.spec, Up: r.sandboxUp, Down: r.sandboxDown}
	if p, ok := c.Policy.(controller.SandboxManagerProvider); ok {
		r.mgr = p.SandboxManager(host)
	} else {
		r.mgr = controller.NewResident(host)
	}
	r.step = &controller.Step{
		Policy: c.Policy, Sandboxes: r.mgr, Backend: c.Backend, Live: &r.live, Clock: c.Clock, Logger: c.Logger,
		Emit: func(a *controller.Agent, e controller.Event) {
			e.Attempt = a.Attempt
			r.rec.emit(e)
		},
		StartRetries: startRetries, StartBackoff: startBackoff,
		// The model wait starts when the action is done, not after the
		// residency boundary (release settles it).
		AsyncBoundary: true,
	}

	sctx, stopSampler := context.WithCancel(ctx)
	samples := make(chan []Sample, 1)
	go func() { samples <- r.sample(sctx) }()

	r.report(0)
	results := make([]WorkflowResult, len(r.wfs))
	var wg sync.WaitGroup
	for i := range r.wfs {
		wg.Go(func() { results[i] = r.workflow(ctx, i) })
	}
	wg.Wait()
	end := c.Clock.Now()
	// Whether the context cut the run is read here, before the policy
	// stops and the host tears down: an interrupt then is not the run's.
	cut := ctx.Err() != nil
	stopSampler()
	res := &Result{
		Policy: c.Policy.Name(), Budget: c.Budget, TimeScale: c.TimeScale, Start: start,
		Makespan: end.Sub(start), Workflows: results, Samples: <-samples,
	}

	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopTimeout)
	defer cancel()
	if err := c.Policy.Stop(stopCtx); err != nil {
		c.Logger.Warn("stopping policy", "policy", c.Policy.Name(), "err", err)
		r.rec.emit(controller.Event{Kind: controller.EventError, Reason: "policy stop", Error: err.Error()})
	}
	r.tally(res)
	res.Interrupted = cut && res.Failed > 0
	r.rec.emit(controller.Event{T: res.Makespan.Seconds(), Kind: controller.EventRunEnd, Workflows: len(r.wfs)})
	if err := r.rec.err(); err != nil {
		return res, fmt.Errorf("writing event log: %w", err)
	}
	return res, nil
}

// tally fills the Result's counters and peak.
func (r *runner) tally(res *Result) {
	res.PeakBytes = r.rec.peakBytes()
	res.Residency = r.rec.residency()
	if p, ok := r.cfg.Domain.(interface{ Peak() (int64, error) }); ok {
		if v, err := p.Peak(); err == nil {
			res.PeakBytes = max(res.PeakBytes, v)
		}
	}
	res.Tally()
}

// report counts a finished workflow and calls the progress callback.
func (r *runner) report(delta int) {
	r.progressMu.Lock()
	defer r.progressMu.Unlock()
	r.done += delta
	if r.progress != nil {
		r.progress(r.done, len(r.wfs))
	}
}

// spec describes a fresh sandbox for the agent's current attempt.
func (r *runner) spec(a *controller.Agent) sandbox.Spec {
	r.mu.Lock()
	r.seq++
	n := r.seq
	r.mu.Unlock()
	id := fmt.Sprintf("%s-%d-a%d-s%d", r.cfg.SandboxPrefix, r.index(a), a.Attempt, n)
	if len(id) > 64 {
		id = id[len(id)-64:]
	}
	wf := a.Workflow
	var binds []sandbox.Bind
	if ws := wf.Workspace; ws != nil && ws.Mount != "" {
		binds = append(binds, sandbox.Bind{Source: a.Workspace, Target: ws.Mount})
	}
	for _, b := range wf.Binds {
		binds = append(binds, sandbox.Bind{Source: b.Source, Target: b.Target, ReadOnly: true})
	}
	return sandbox.Spec{
		ID: id, Image: wf.Image, Workspace: a.Workspace, Env: slices.Clone(wf.Env), Binds: binds,
		Labels: map[string]string{"tenon.workflow": a.ID, "tenon.attempt": fmt.Sprint(a.Attempt)},
	}
}

// index is the agent's workflow index (its position in Config.Workflows).
func (r *runner) index(a *controller.Agent) int {
	for i := range r.wfs {
		if &r.wfs[i] == a.Workflow {
			return i
		}
	}
	return -1
}

func (r *runner) sandboxUp(a *controller.Agent, info sandbox.Info) {
	r.live.Add(a, info)
	r.rec.emit(controller.Event{Kind: controller.EventSandboxCreate, Workflow: a.ID, Attempt: a.Attempt, Sandbox: info.ID})
	r.cfg.Policy.SandboxUp(a, info)
}

func (r *runner) sandboxDown(a *controller.Agent, id string) {
	r.live.Remove(id)
	r.rec.emit(controller.Event{Kind: controller.EventSandboxDestroy, Workflow: a.ID, Attempt: a.Attempt, Sandbox: id})
	r.cfg.Policy.SandboxDown(a, id)
}
