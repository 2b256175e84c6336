package residency

import (
	"context"
	"errors"
	"fmt"

	"github.com/tenon-dev/tenon/internal/policy"
	"github.com/tenon-dev/tenon/internal/store"
)

// Ensure returns a live, ready sandbox for the agent before an action is
// dispatched: the resident one, a fresh one for a new agent, or one
// rematerialized from the latest recovery record. A rematerialization does
// not start under red pressure: Ensure waits until pressure falls. A
// paged-out sandbox is paged in and thawed first (also waiting out red
// pressure). Calls
// for one agent must be sequential; each successful Ensure must be
// followed by a Boundary (or Release).
func (m *Manager) Ensure(ctx context.Context, info AgentInfo) (string, error) {
	if m.bg.Err() != nil {
		return "", ErrClosed
	}
	a := m.getOrAdd(info)
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.state == stateReleased {
		return "", fmt.Errorf("%w: %s was released", ErrUnknownAgent, info.ID)
	}
	if a.state == stateAbsent && a.info.Attempt != info.Attempt {
		// A new attempt restarts the workflow from scratch: the old record
		// describes a different attempt and must not be restored.
		m.dropRecords(a)
		a.state, a.generation = stateNew, 0
	}
	a.info = info
	switch a.state {
	case stateResident:
		if a.pagedOut {
			if err := m.waitRematAllowed(ctx, a, false); err != nil {
				return "", err
			}
			if err := m.paging.acquire(ctx, prioDemand); err != nil {
				return "", err
			}
			err := m.pageInLocked(ctx, a, false, false)
			m.paging.release()
			if err != nil {
				return "", err
			}
		}
	case stateNew:
		// A new sandbox takes memory as a rematerialization does: in red
		// it waits, so a burst of agent starts does not add sandboxes to
		// a domain at its budget.
		if err := m.waitRematAllowed(ctx, a, true); err != nil {
			return "", err
		}
		if err := m.create(ctx, a); err != nil {
			return "", err
		}
	case stateAbsent:
		if err := m.waitRematAllowed(ctx, a, false); err != nil {
			return "", err
		}
		if err := m.lifecycle.acquire(ctx, prioRestore); err != nil {
			return "", err
		}
		err := m.rematerialize(ctx, a)
		m.lifecycle.release()
		if err != nil {
			return "", err
		}
	}
	a.busy = true
	m.unstall(a) // a stall is of one action
	return a.sandbox, nil
}

// waitRematAllowed blocks while pressure forbids a rematerialization (or
// a page-in, or with create a first sandbox's creation, which takes
// memory the same way). A wait is counted and logged once, as a deferred
// create or a deferred restore.
func (m *Manager) waitRematAllowed(ctx context.Context, a *agent, create bool) error {
	deferred := false
	for !policy.MayRematerialize(m.cfg.Pressure(), false) {
		if !deferred {
			deferred = true
			kind, count := EventRematDeferred, func(x *Metrics) { x.RematDeferred++ }
			if create {
				kind, count = EventCreateDeferred, func(x *Metrics) { x.CreatesDeferred++ }
			}
			m.metrics.update(count)
			m.emit(Event{Kind: kind, Agent: a.info.ID, Reason: m.cfg.Pressure().String() + " pressure"})
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-m.bg.Done():
			return ErrClosed
		case <-m.cfg.Clock.After(m.cfg.PressurePoll):
		}
	}
	return nil
}

// create makes the agent's first sandbox (a.mu held). It takes no
// lifecycle slot: a first sandbox is the agent's own start, which agent
// pacing (and in red waitRematAllowed) already bounds, as the simulator
// models it. In a slot, a burst of agent starts was created two at a
// time: live on the real traces (batch18 x2 at 1 GiB) the second copies'
// first sandboxes came 25-33 s after their agents started, where Eager,
// creating all at once, took 0.3-3.1 s.
func (m *Manager) create(ctx context.Context, a *agent) error {
	start := m.cfg.Clock.Now()
	spec := m.spec(a, store.Record{})
	id, err := m.host.Create(ctx, spec)
	if err != nil {
		return fmt.Errorf("creating sandbox for %s: %w", a.info.ID, err)
	}
	if err := m.host.Ready(ctx, id); err != nil {
		m.destroyQuiet(id, a.info.ID)
		return fmt.Errorf("sandbox %s of %s not ready: %w", id, a.info.ID, err)
	}
	a.state = stateResident
	m.setSandbox(a, id)
	if err := m.putAgent(a); err != nil {
		m.destroyQuiet(id, a.info.ID)
		a.state = stateNew
		m.setSandbox(a, "")
		return fmt.Errorf("registering agent %s: %w", a.info.ID, err)
	}
	m.metrics.update(func(x *Metrics) { x.Creates++ })
	m.emit(Event{Kind: EventCreate, Agent: a.info.ID, Sandbox: id, Duration: m.cfg.Clock.Now().Sub(start)})
	return nil
}

func (m *Manager) spec(a *agent, rec store.Record) Spec {
	s := Spec{
		AgentID: a.info.ID, WorkflowID: a.info.WorkflowID, Attempt: a.info.Attempt,
		BaseImage: a.info.BaseImage, Runtime: a.info.Runtime,
	}
	if rec.Generation != 0 {
		s.Generation, s.BaseImage, s.Runtime = rec.Generation, rec.BaseImage, rec.Runtime
	}
	return s
}

func (m *Manager) destroyQuiet(id, agentID string) {
	if err := m.host.Destroy(context.WithoutCancel(m.bg), id); err != nil {
		m.log.Warn("destroying sandbox", "sandbox", id, "agent", agentID, "err", err)
		m.emit(Event{Kind: EventDestroyFailed, Agent: agentID, Sandbox: id, Err: err})
	}
}

// Boundary checks the restart-safe contract at an action-done boundary,
// marks the agent idle and, unless Config.ManualReclaim, asks the tick
// loop to apply the residency policy at once (off the agent's path;
// teardowns run in the background). The verdict is returned; an error
// means the agent is unknown or not resident.
func (m *Manager) Boundary(ctx context.Context, agentID string, b BoundaryInfo) (Verdict, error) {
	a, err := m.lookup(agentID)
	if err != nil {
		return Verdict{}, err
	}
	a.mu.Lock()
	if a.state != stateResident {
		a.mu.Unlock()
		return Verdict{}, fmt.Errorf("%w: %s", ErrNotResident, agentID)
	}
	obs := Observation{ActionExited: b.ActionExited, ResultRecorded: b.ResultRecorded, Pinned: b.Pinned}
	procs, perr := m.host.Procs(ctx, a.sandbox)
	obs.Procs = procs
	v := Check(obs)
	if perr != nil && v.Restartable {
		v = Verdict{Reason: fmt.Sprintf("cannot list processes: %v", perr)}
	}
	ws, werr := m.host.WorkingSet(ctx, a.sandbox)
	if werr != nil {
		m.log.Warn("reading working set", "agent", agentID, "sandbox", a.sandbox, "err", werr)
	}
	a.busy = false
	m.unstall(a)
	a.haveVerdict, a.verdict = true, v
	a.idleSince, a.wait, a.workingSet = m.cfg.Clock.Now(), b.PredictedWait, ws
	a.info.NextAction = b.NextAction
	sandbox := a.sandbox
	a.mu.Unlock()
	m.metrics.update(func(x *Metrics) {
		x.Boundaries++
		if v.Restartable {
			x.RestartableBoundaries++
		}
	})
	m.emit(Event{Kind: EventBoundary, Agent: agentID, Sandbox: sandbox, WorkingSet: ws, Reason: v.Label() + reasonSuffix(v)})
	if !m.cfg.ManualReclaim {
		m.kicks.kick()
	}
	return v, nil
}

func reasonSuffix(v Verdict) string {
	if v.Reason == "" {
		return ""
	}
	return ": " + v.Reason
}

// Release ends the agent: destroys its sandbox if resident, deletes its
// registry entry and records and collects its blobs.
func (m *Manager) Release(ctx context.Context, agentID string) error {
	a, err := m.lookup(agentID)
	if err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	var errs []error
	if a.state == stateResident {
		if err := m.host.Destroy(ctx, a.sandbox); err != nil {
			errs = append(errs, fmt.Errorf("destroying sandbox %s: %w", a.sandbox, err))
		}
	}
	a.state, a.busy = stateReleased, false
	m.setSandbox(a, "")
	m.unstall(a)
	if err := m.dropRecords(a); err != nil {
		errs = append(errs, err)
	}
	m.mu.Lock()
	delete(m.agents, agentID)
	m.mu.Unlock()
	return errors.Join(errs...)
}

// dropRecords deletes the agent's registry entry and records and collects
// their blobs (a.mu held).
func (m *Manager) dropRecords(a *agent) error {
	m.unpark(a)
	recs, err := m.st.DeleteAgent(a.info.ID)
	if err != nil {
		return err
	}
	m.collect(recs)
	return nil
}
