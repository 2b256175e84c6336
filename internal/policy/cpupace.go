package policy

import (
	"math"
	"time"

	"github.com/tenon-dev/tenon/internal/gate"
)

// CPU pacing. Agent pacing by memory alone starts every agent the budget
// has room for; where the CPU, not memory, is what the host runs out of,
// each agent started beyond the CPU's capacity slows every running action
// by its share, and the agents all finish late together (processor
// sharing), where agents started a few at a time finish early in turn.
//
// So agent pacing also waits while the sandboxes use most of the host's
// CPUs: cpuLoad follows the cores the sandboxes use (the CPU times of the
// gate's samples, Observation.Sandboxes), smoothed over CPUWindow gate
// periods, and no new agent starts (unless none runs) while the smoothed
// use is at least CPUBusy of Config.CPUs. The host states its CPUs
// (Options.CPUs); where it does not (0: the simulator, which models no
// CPU) the rule is off, and cpu-pacing=off turns it off.
//
// Until 2026-12-03 pacing also projected the load: no agent started while
// one more at the measured CPU per agent, from a prior of one core per
// agent, would take the running agents past all the CPUs. Measured live
// the agents used 0.05-0.2 cores each (model waits are most of an agent's
// time), and the smoothed use never reached the threshold on the real
// traces: what held agents back was the prior, two agents at first on a
// 2-core host, fading as agent-time was measured. That slow start
// shortened one trace set's makespan (haiku at 1 GiB) and lengthened its
// P50, lengthened the other's makespan (batch18), the generated workload's
// by 45 % and the daemon's behind a harness by 12 %, so it was dropped
// (bench/results/bench-traces-live-cpu.md).

// DefaultCPUBusy is the share of the host's CPUs the sandboxes may use
// before agent pacing waits: below all of them, since the host's own
// work (the replay or daemon, reclaim and compression of swapped pages)
// takes some, and a smoothed use close to all of them is already queueing.
const DefaultCPUBusy = 0.8

// CPUWindow is the time constant of the smoothed CPU use, in gate periods
// (2 s at the default 100 ms period; the gate's period follows the
// replay's time scale, ScaledGate, and so does the window).
const CPUWindow = 20

// cpuLoad follows the cores the sandboxes use.
type cpuLoad struct {
	at   time.Time                // last sample
	prev map[string]time.Duration // CPU time per sandbox at it
	busy float64                  // smoothed cores in use
}

// observe takes one gate sample: the cores the sandboxes used since the
// last one (sandboxes new in this sample count from the next), folded into
// the moving average with time constant tau.
func (l *cpuLoad) observe(now time.Time, smp []gate.Sample, tau time.Duration) {
	cur := make(map[string]time.Duration, len(smp))
	var used time.Duration
	for _, s := range smp {
		cur[s.ID] = s.CPU
		if p, ok := l.prev[s.ID]; ok && s.CPU > p {
			used += s.CPU - p
		}
	}
	dt := now.Sub(l.at)
	if l.prev != nil && dt > 0 && tau > 0 {
		a := 1 - math.Exp(-float64(dt)/float64(tau))
		l.busy += a * (float64(used)/float64(dt) - l.busy)
	}
	l.at, l.prev = now, cur
}

// cpuTau is the smoothed CPU use's time constant.
func (m *Machine) cpuTau() time.Duration { return CPUWindow * m.cfg.GateConfig.Period }

// cpuFull reports whether CPU pacing holds new agents back: the host's
// CPUs are known and the sandboxes' smoothed use is at least CPUBusy of
// them.
func (m *Machine) cpuFull() bool {
	if m.cfg.CPUs <= 0 || m.cfg.CPUBusy <= 0 {
		return false
	}
	return m.cpu.busy >= m.cfg.CPUBusy*m.cfg.CPUs
}

// CPUBusy is the sandboxes' smoothed CPU use in cores (0 before two gate
// samples). Nothing logs it yet; the tests read it.
func (m *Machine) CPUBusy() float64 { return m.cpu.busy }
