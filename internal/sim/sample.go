package sim

import (
	"cmp"
	"slices"
	"time"

	"github.com/tenon-dev/tenon/internal/gate"
)

// sample is one gate period: step the OOM hold (as the live gate runner
// does before it observes), observe every live sandbox, run one
// gate.Controller.Step, freeze and thaw as decided; then the residency
// policy's idle reclaim and held-back rematerializations.
func (s *sim) sample() {
	s.kick = true
	s.stepHold()
	if s.gate != nil {
		s.h.advanceAll(s.now)
		obs := gate.Observation{Budget: s.cfg.Budget, Available: max(s.cfg.Budget-s.h.used, 0),
			Sandboxes: make([]gate.Sample, 0, len(s.h.all))}
		for _, sb := range s.h.sorted {
			if sb.state == sbLive {
				smp := gate.Sample{ID: sb.id, Footprint: sb.mem, CPU: sb.cpu}
				if s.adm != nil {
					s.demandCap(sb, &smp)
				}
				obs.Sandboxes = append(obs.Sandboxes, smp)
			}
		}
		t0 := time.Now()
		d := s.gate.Step(epoch.Add(s.now), obs)
		s.res.GateStepWall += time.Since(t0)
		s.res.GateSteps++
		s.pressure = d.Pressure
		s.traceGate(d, len(obs.Sandboxes), obs.Available)
		for _, sd := range d.Sandboxes {
			sb := s.h.byID[sd.ID]
			switch {
			case sb == nil:
			case !sd.Allowed && !sb.frozen:
				s.debugf("freeze %s %v mem=%dMiB demand=%dMiB", sb.id, d.Pressure, sb.mem>>20, sd.Demand>>20)
				s.freeze(sb)
			case sd.Allowed && sb.frozen:
				s.debugf("thaw %s %v mem=%dMiB demand=%dMiB", sb.id, d.Pressure, sb.mem>>20, sd.Demand>>20)
				s.thaw(sb)
			}
		}
	}
	if s.cfg.Policy.Residency {
		if p := s.pressureNow(); s.cfg.Residency.ReclaimIdle(p) {
			s.reclaimIdle()
		}
		s.retryBlocked()
	}
}

func (s *sim) freeze(sb *sandbox) {
	s.res.Freezes++
	s.h.setActive(sb, s.now, false)
	sb.frozen = true
	sb.gen++ // cancels the pending phase event; thaw reschedules it
}

func (s *sim) thaw(sb *sandbox) {
	sb.frozen = false
	if sb.act != nil && !sb.oomWait { // a waiter stays waiting; resume goes on with it
		s.h.setActive(sb, s.now, true)
		s.schedulePhase(sb)
	}
}

// reclaimIdle tears down idle restartable sandboxes of agents in a model
// wait, largest first, while lifecycle slots are free.
func (s *sim) reclaimIdle() {
	if s.lifeUsed >= s.cfg.LifecycleSlots {
		return
	}
	var idle []*sandbox
	for _, sb := range s.h.all {
		if sb.state == sbLive && sb.act == nil && !sb.pinned && sb.ag.phase == phWaiting && sb.ag.sb == sb {
			idle = append(idle, sb)
		}
	}
	slices.SortFunc(idle, func(a, b *sandbox) int {
		if c := cmp.Compare(b.mem, a.mem); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
	for _, sb := range idle {
		if s.lifeUsed >= s.cfg.LifecycleSlots {
			return
		}
		s.teardown(sb, true)
	}
}

// traceGate sends a summary of the gate's state to Config.Debug every 5 s
// of simulated time.
func (s *sim) traceGate(d gate.Decision, live int, avail int64) {
	if s.cfg.Debug == nil || s.now%(5*time.Second) != 0 {
		return
	}
	frozen := 0
	for _, sb := range s.h.all {
		if sb.frozen {
			frozen++
		}
	}
	s.debugf("gate %v avail=%dMiB live=%d frozen=%d running=%d admitted=%d waiting=%d active=%d queued=%d permitted=%d",
		d.Pressure, avail>>20, live, frozen, s.running, len(s.admitted), s.waiting, s.active, len(s.slotQueue), len(d.Permitted))
}
