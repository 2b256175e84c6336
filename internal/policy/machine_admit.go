package policy

import (
	"fmt"
	"iter"
	"strconv"
	"time"

	"github.com/tenon-dev/tenon/internal/admission"
	"github.com/tenon-dev/tenon/internal/predict"
	"github.com/tenon-dev/tenon/internal/trajectory"
)

// ActionReady is agent id's action index (act) becoming ready in sandbox.
// Without admission it is admitted at once (ok true). With admission it is
// predicted and queued; a later Schedule admits it.
func (m *Machine) ActionReady(now time.Time, id string, index int, act *trajectory.Action, sandbox string) (g Grant, ok bool, err error) {
	m.now = now
	c, _ := m.begin(Call{Kind: "ready", T: now, Agent: id, Index: index, Sandbox: sandbox}, nil)
	defer func() {
		if c != nil {
			if ok {
				c.Grants = []Grant{g}
			}
			if err != nil {
				c.Err = err.Error()
			}
		}
		m.end(c)
	}()
	a := m.agents[id]
	if a == nil || !a.started {
		return Grant{}, false, fmt.Errorf("%w: %s: action of agent %s, which has no started attempt", ErrBadOption, m.cfg.Name, id)
	}
	if a.ticket != nil {
		return Grant{}, false, fmt.Errorf("%w: %s: agent %s already has action %d outstanding", ErrBadOption, m.cfg.Name, id, a.index)
	}
	a.index, a.act, a.sandbox, a.actStart = index, act, sandbox, now
	if m.adm == nil {
		g := Grant{Agent: id}
		if m.cfg.AgentCgroup && act != nil && act.PeakMiB() < m.cfg.HighMiB {
			g.Limit = m.cfg.LowLimit
		}
		return g, true, nil
	}
	d := m.cfg.Model.Predict(predict.ContextFor(id, *act, a.hist, now.Sub(a.start).Seconds()))
	d = m.learned.Apply(ActionKey{Workflow: id, Index: index}, d)
	a.task, a.hasTask = TaskKey{}, false
	if !m.cfg.NoTaskReserve {
		a.task, a.hasTask = taskKey(a.wf, index)
	}
	if a.hasTask {
		d = m.taskLearned.Apply(a.task, d)
	}
	m.seq++
	// Queued in the order the actions became ready. Tried, not adopted:
	// in the order their attempts started (oldest work first, for P50):
	// over the 288 simulated runs of hold_preempt.go's grid 16 runs lost
	// 51 workflows (haiku's heaviest at 2 GiB, batch18's at 4 GiB, their
	// retries spent), and swe-real's summed makespan rose 2-4 %.
	a.ticket = m.adm.Enqueue(admission.Request{ID: sandbox + "/" + strconv.Itoa(index), Descriptor: d, Enqueued: now})
	a.enq, a.seq, a.peak = now, m.seq, d.PredPeak
	m.tickets[a.ticket] = a
	return Grant{}, false, nil
}

// Schedule runs admission with the physical headroom (PhysicalHeadroom,
// raised by LivenessHeadroom), light actions also in Config.LightMargin of
// the margin, and returns the actions it admitted. A host
// calls it after an action became ready or ended and every admission
// period.
func (m *Machine) Schedule(now time.Time, obs Observer) (out []Grant) {
	m.now = now
	if m.adm == nil || len(m.tickets) == 0 {
		return nil
	}
	c, obs := m.begin(Call{Kind: "schedule", T: now}, obs)
	defer func() {
		if c != nil {
			c.Grants = out
		}
		m.end(c)
	}()
	phys := m.physicalHeadroom(obs)
	if len(m.admitted) == 0 {
		var oldest *agentState
		for _, a := range m.tickets {
			if oldest == nil || a.enq.Before(oldest.enq) || a.enq.Equal(oldest.enq) && a.seq < oldest.seq {
				oldest = a
			}
		}
		if got := LivenessHeadroom(phys, 0, &Queued{Enqueued: oldest.enq, Peak: oldest.peak}, now); got > phys {
			phys = got
			m.stats.LivenessAdmits++
		}
	}
	for _, t := range m.adm.Schedule(phys, m.cfg.LightMargin) {
		a := m.tickets[t]
		delete(m.tickets, t)
		if a == nil {
			continue
		}
		a.admIdx, a.charge, a.actStart, a.rolling = len(m.admitted), t.Charge(), now, false
		// Its level before the action: what the sandbox holds, or its
		// floor when it holds less (paged out while it waited; the host
		// faults it back before the action runs).
		a.before = a.floor
		if v, ok := obs.Memory(a.sandbox); ok {
			a.before = max(v, a.floor)
		}
		m.admitted = append(m.admitted, a)
		out = append(out, Grant{Agent: a.id, Charge: a.charge, Peak: a.peak, Heavy: t.Heavy()})
	}
	return out
}

// Pace runs agent pacing over the queued attempts (with admission; other
// policies start agents in Submit and AgentEnd) and returns those that may
// start.
func (m *Machine) Pace(now time.Time, obs Observer) (started []string) {
	m.now = now
	if m.adm == nil || len(m.queue) == 0 {
		return nil
	}
	c, obs := m.begin(Call{Kind: "pace", T: now}, obs)
	defer func() {
		if c != nil {
			c.Started = started
		}
		m.end(c)
	}()
	return m.pace(obs)
}

// physicalHeadroom is PhysicalHeadroom over the observed available memory
// and the admitted actions' current sandbox memory.
func (m *Machine) physicalHeadroom(obs Observer) int64 {
	return PhysicalHeadroom(obs.Available(), m.cfg.Margin, m.admittedNow(obs))
}

// admittedNow yields the admitted actions with their sandboxes' memory now
// (their memory at admission where it cannot be read).
func (m *Machine) admittedNow(obs Observer) iter.Seq[Admitted] {
	return func(yield func(Admitted) bool) {
		for _, a := range m.admitted {
			ad := a.admittedAt(a.before)
			if v, ok := obs.Memory(a.sandbox); ok {
				ad.Memory = v
			}
			if !yield(ad) {
				return
			}
		}
	}
}

// admittedAt is a's admitted action with its sandbox at memory mem.
func (a *agentState) admittedAt(mem int64) Admitted {
	return Admitted{Before: a.before, Memory: mem, Peak: a.peak, Charge: a.charge}
}

// ActionDone ends agent id's admitted action with what it measured: the
// admission charge is released, what it grew is learned for a retry, and
// it joins the attempt's history for the predictor.
func (m *Machine) ActionDone(now time.Time, id string, d Done) (err error) {
	m.now = now
	c, _ := m.begin(Call{Kind: "done", T: now, Agent: id, Index: d.Index, Done: d}, nil)
	defer func() {
		if c != nil && err != nil {
			c.Err = err.Error()
		}
		m.end(c)
	}()
	a := m.agents[id]
	if a == nil {
		return fmt.Errorf("%w: %s: action done for agent %s, which has no attempt", ErrBadOption, m.cfg.Name, id)
	}
	if d.AfterBytes > 0 {
		a.floor = d.AfterBytes
	}
	if m.adm == nil {
		a.act = nil
		return nil
	}
	if a.admIdx < 0 {
		return fmt.Errorf("admission: action %d of agent %s done but never admitted", d.Index, id)
	}
	grown := max(d.PeakBytes-a.before, 0)
	if !d.Lost {
		m.learned.Learn(ActionKey{Workflow: id, Index: a.index}, grown, a.peak, d.OOM)
		m.learnTask(a, grown)
		c := predict.Completed{PeakBytes: grown, AvgBytes: max(d.AvgBytes-a.before, 0),
			DurationS: d.Duration.Seconds(), EndOffsetS: now.Sub(a.start).Seconds()}
		if a.act != nil {
			c.Class, c.Command = a.act.Class, a.act.Command
		}
		a.hist = append(a.hist, c)
	}
	return m.release(a)
}

// CancelAction drops agent id's waiting or admitted action without
// learning from it (the caller gave up waiting, or the attempt failed
// before the action ran).
func (m *Machine) CancelAction(now time.Time, id string) {
	m.now = now
	c, _ := m.begin(Call{Kind: "cancel", T: now, Agent: id}, nil)
	defer m.end(c)
	if a := m.agents[id]; a != nil {
		m.dropAction(a)
	}
}

// dropAction cancels a's waiting ticket or releases its admitted one.
func (m *Machine) dropAction(a *agentState) {
	switch {
	case a.ticket == nil:
	case a.admIdx >= 0:
		_ = m.release(a)
	default:
		m.adm.Cancel(a.ticket)
		delete(m.tickets, a.ticket)
		a.ticket = nil
	}
	a.act = nil
}

// release gives a's admitted ticket back.
func (m *Machine) release(a *agentState) error {
	err := m.adm.Release(a.ticket)
	i := a.admIdx
	last := m.admitted[len(m.admitted)-1]
	m.admitted[i], last.admIdx = last, i
	m.admitted = m.admitted[:len(m.admitted)-1]
	a.admIdx, a.ticket, a.act = -1, nil, nil
	return err
}

// AdmittedIn returns the admitted action running in sandbox, as the
// physical check sees it with the sandbox at memory mem (Sample caps the
// gate's demand with it).
func (m *Machine) AdmittedIn(sandbox string, mem int64) (Admitted, bool) {
	for _, a := range m.admitted {
		if a.sandbox == sandbox {
			return a.admittedAt(mem), true
		}
	}
	return Admitted{}, false
}

// Status is admission's state (zero without admission).
func (m *Machine) Status() admission.Status {
	if m.adm == nil {
		return admission.Status{}
	}
	return m.adm.Snapshot()
}
