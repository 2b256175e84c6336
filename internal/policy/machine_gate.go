package policy

import (
	"slices"
	"time"

	"github.com/tenon-dev/tenon/internal/gate"
)

// Observation is one gate period's snapshot of the domain.
type Observation struct {
	Available int64         // the domain's budget minus its working set, bytes
	Sandboxes []gate.Sample // every live sandbox's footprint and CPU time (no caps: the machine sets them)
	UnderOOM  bool          // tasks wait for memory under the OOM hold
	// AboveHoldLine is the domain's usage above the hold's line (v2:
	// memory.high under the hold); the freezing hold thaws what it holds
	// only below it (hold_freeze.go). Unused without it.
	AboveHoldLine bool
}

// Step is what one gate period decided.
type Step struct {
	// Gate is the gate's decision (zero without a gate): the host allows or
	// denies each sandbox as Gate.Sandboxes says.
	Gate gate.Decision
	// Hold is the OOM hold's action: HoldRelease lets the OOM killer act,
	// HoldRearm arms the hold again; the others are for the log.
	Hold HoldAction
	// Held is how long the wait that Hold ended lasted (for the log).
	Held time.Duration
	// HoldFrozen lists the sandboxes the freezing hold holds (oldest
	// first), denied in Gate whatever the gate decided.
	HoldFrozen []string
	// Preempt is the action to preempt when Hold is HoldPreempt; its
	// sandbox is allowed in Gate until the action ends.
	Preempt Preemption
	// Rollback, when its Agent is set, is an admitted action to roll back
	// to the boundary before it (SetHoldRollback, hold_rollback.go).
	Rollback Preemption
	// HoldProgress says, while tasks wait under the hold, what counted as
	// progress this period and kept the wait from timing out: "cpu ID"
	// (sandbox ID used CPU) or "resting ID" (it rests at its peak:
	// hold_rest.go); "" when nothing did (for the log).
	HoldProgress string
}

// MachineStats counts decisions beyond the gate's and the hold's.
type MachineStats struct {
	LivenessAdmits int // Schedule calls whose headroom the liveness rule raised
	GateSteps      int
}

// Stats returns the machine's counters.
func (m *Machine) Stats() MachineStats { return m.stats }

// Sample is one gate period: the OOM hold steps with the domain's
// under-OOM flag and whether any sandbox progressed since the last sample
// (used at least 5 % of a period of CPU with no thread stalled on memory,
// or rests at its peak while its action runs: hold_rest.go; a deadlocked
// wait may preempt a victim instead of releasing: hold_preempt.go), then
// the gate steps over the sandboxes, each
// sandbox's projected demand capped by its admitted action's predicted
// remaining growth when admission is on (DemandCap).
func (m *Machine) Sample(now time.Time, obs Observation) (st Step) {
	m.now = now
	m.available, m.sampled = obs.Available, true
	c, _ := m.begin(Call{Kind: "sample", T: now, Sample: obs}, nil)
	defer func() {
		if c != nil {
			c.Step = st
		}
		m.end(c)
	}()
	if m.hold != nil {
		waiting, since := m.hold.state == holdWaiting, m.hold.since
		m.rest.observe(now, obs.Sandboxes, waiting, m.froze)
		by := m.progressed(obs.Sandboxes, m.cfg.GateConfig.Period/20)
		if by != "" {
			by = "cpu " + by
		} else if waiting {
			if id := m.anyResting(since); id != "" {
				by = "resting " + id
			}
		}
		progress := by != ""
		if waiting {
			st.HoldProgress = by
		}
		// Under the freezing hold, a sandbox it holds waits as a v1 task
		// sleeping in the OOM wait does.
		under := obs.UnderOOM || (m.freeze != nil && m.freeze.holding())
		m.notePreempted()
		var victim, back *agentState
		idle := false
		if waiting {
			if m.preempt {
				victim = m.holdVictim(now, since)
				if victim == nil {
					victim, idle = m.idleVictim(since, obs.Available)
				}
			}
			back = m.rollbackVictim(now, since)
		}
		st.Hold = m.hold.step(now, under, progress, victim != nil)
		if back != nil && m.hold.state == holdWaiting {
			// A rollback loses the action's progress only: in a
			// deadlock it goes before a preemption, which loses
			// the attempt's (hold_rollback.go).
			if st.Hold == HoldPreempt {
				st.Hold = HoldNone
			}
			back.rolled, back.rolling = back.index+1, true
			st.Rollback = Preemption{Agent: back.id, Sandbox: back.sandbox}
		} else if st.Hold == HoldPreempt {
			m.hold.stats.Preempted++
		}
		if st.Hold == HoldResolved || st.Hold == HoldRelease {
			st.Held = now.Sub(since)
		}
		switch st.Hold {
		case HoldRelease:
			m.relAvail, m.relAt = obs.Available, now
		case HoldResolved:
			m.relAvail = -1
		}
		if st.Hold == HoldPreempt {
			st.Preempt = Preemption{Agent: victim.id, Sandbox: victim.sandbox, Idle: idle}
			if idle {
				victim.idleCut = true
			} else {
				if m.preempted == nil {
					m.preempted = map[string]bool{}
				}
				m.preempted[victim.sandbox] = true
			}
		}
		if m.freeze != nil {
			m.freeze.step(m.hold.state, obs.UnderOOM, obs.AboveHoldLine, obs.Sandboxes, m.preempted)
			st.HoldFrozen = slices.Clone(m.freeze.held)
		}
	}
	if m.adm != nil && m.cfg.CPUs > 0 && m.cfg.CPUBusy > 0 {
		m.cpu.observe(now, obs.Sandboxes, m.cpuTau(), m.active, m.cfg.CPUBusy*m.cfg.CPUs)
	}
	if m.gate == nil {
		return st
	}
	smp := obs.Sandboxes
	if m.adm != nil {
		smp = make([]gate.Sample, len(obs.Sandboxes))
		copy(smp, obs.Sandboxes)
		// One pass over the admitted actions, not one per sandbox: with
		// thousands of sandboxes a scan per sample made the step quadratic.
		bySandbox := make(map[string]*agentState, len(m.admitted))
		for _, a := range m.admitted {
			if _, dup := bySandbox[a.sandbox]; !dup {
				bySandbox[a.sandbox] = a
			}
		}
		for i := range smp {
			var adm *Admitted
			if a := bySandbox[smp[i].ID]; a != nil {
				ad := a.admittedAt(smp[i].Footprint)
				adm = &ad
			}
			smp[i].DemandCap, smp[i].HasCap = DemandCap(adm, m.cfg.GateConfig.BootstrapDemand)
			if adm != nil {
				m.learnTask(bySandbox[smp[i].ID], adm.Memory-adm.Before)
			}
		}
	}
	st.Gate = m.gate.Step(now, gate.Observation{Budget: m.cfg.Budget, Available: obs.Available, Sandboxes: smp})
	if m.freeze != nil {
		m.freeze.deny(&st.Gate)
	}
	m.allowEnded(&st.Gate, smp)
	if m.hold != nil && m.hold.state == holdWaiting {
		m.holdThawed += m.thawResting(&st.Gate)
		if m.preempt {
			m.denyNewcomers(&st.Gate, m.hold.since)
		}
	}
	m.allowPreempted(&st.Gate)
	m.noteDenied(now, st.Gate)
	m.frozen = st.Gate.Denied
	m.pressure, m.rprev = st.Gate.Pressure, st.Gate.RPrev
	m.stats.GateSteps++
	return st
}

// progressed returns the first sandbox (in sample order) that used at
// least min CPU time since the previous sample (a sandbox seen for the
// first time counts from zero), "" when none did, and remembers this
// sample's CPU times. A sandbox missing from one
// sample (its stats read failed) keeps its previous time for the next. min
// filters the odd wakeup of an idle process or of a task retrying reclaim
// at the budget; a running tool uses far more. A sandbox with nothing but
// its init (Procs 1) does not count: no tool of it runs, and live its
// executor, sending an action's result at the v1 budget, burned CPU in
// the kernel's reclaim retrying the write, which kept the hold waiting
// for the result while the result waited for the hold (hold_rest.go).
//
// Nor does a sandbox stalled on memory (a thread blocked, or its v2 stall
// total advancing: holdRest's stalled) at this sample or the previous
// one: its CPU is not a tool's work but what the rest of it does while
// the allocating thread waits. Live on v1, in a deadlock of two test runs
// mid-ramp at a 2 GiB budget (haiku twice), every grower had a thread in
// the OOM wait (mem_cgroup_oom_synchronize) for minutes, while its other
// threads (the Go runtime's, the executor's) used 10-20 ms of CPU a
// second, in bursts that passed min in one period or another: the hold
// took that for progress and waited until the actions' timeout (200-240 s)
// instead of preempting one of them after its timeout.
func (m *Machine) progressed(smp []gate.Sample, min time.Duration) string {
	prev := m.lastCPU
	m.lastCPU = make(map[string]cpuSeen, len(smp))
	moved := ""
	for _, s := range smp {
		stalled := m.rest.seen[s.ID].stalled
		m.lastCPU[s.ID] = cpuSeen{cpu: s.CPU, stalled: stalled}
		p := prev[s.ID]
		if moved == "" && !s.Ended() && !stalled && !p.stalled && s.CPU-p.cpu >= max(min, 1) {
			moved = s.ID
		}
	}
	for id, p := range prev {
		if _, ok := m.lastCPU[id]; !ok && !p.missed {
			p.missed = true
			m.lastCPU[id] = p
		}
	}
	return moved
}

// cpuSeen is a sandbox's CPU time at the last sample that had it.
type cpuSeen struct {
	cpu     time.Duration
	stalled bool // stalled on memory at that sample
	missed  bool // absent from the latest sample (kept for one more)
}

// allowEnded allows, in the gate's decision d, every denied sandbox that
// has nothing but its init left (gate.Sample.Procs 1) and that the
// freezing hold does not hold: no tool of it runs that could grow, and
// frozen its executor cannot send the result of the action that just
// ended, which the policy waits for (live, the gate froze one so until
// the action's timeout).
func (m *Machine) allowEnded(d *gate.Decision, smp []gate.Sample) {
	var ended map[string]bool
	for _, s := range smp {
		if s.Ended() && (m.freeze == nil || !slices.Contains(m.freeze.held, s.ID)) {
			if ended == nil {
				ended = make(map[string]bool)
			}
			ended[s.ID] = true
		}
	}
	if ended == nil {
		return
	}
	for i := range d.Sandboxes {
		if sd := &d.Sandboxes[i]; ended[sd.ID] && !sd.Allowed {
			allow(d, sd)
		}
	}
}
