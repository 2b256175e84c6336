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
// Live on a 2-core host the imported real traces ran their actions five to
// six times as long in sum under tenon as under agent-level reservation,
// which starts few agents (bench/results/archive/bench-traces-live-pvm.md).
//
// So agent pacing also waits while the sandboxes use, or its agents are
// expected to use, most of the host's CPUs. cpuLoad follows the cores the
// sandboxes use (the CPU times of the gate's samples,
// Observation.Sandboxes), smoothed over CPUWindow gate periods, and the
// CPU an agent uses on average while it runs (CPU time per agent-second,
// its model waits included), measured while the CPUs are not saturated
// (there the use is the CPUs', not the agents' demand) and starting from
// a prior of one core per agent worth CPUPriorWindows windows. No new
// agent starts (unless none runs) while the smoothed use is at least
// CPUBusy of Config.CPUs, or while one more agent at the average use would
// take the running agents past all of them: agents arrive faster than
// their load shows (a replay starts every agent the memory has room for
// within its first seconds). The host states its CPUs (Options.CPUs);
// where it does not (0: the simulator, which models no CPU) the rule is
// off, and cpu-pacing=off turns it off.
//
// The controlling process's own CPU is not counted. Counting it (tried):
// live on this project's 2-core PVM host, batch18 at 1 GiB compressed
// twelvefold, the controller used 0.5-0.7 cores (its gate loop reads
// every sandbox's files each 20 ms period), pacing then held the agents
// to 6.9 on average (18.6 without) and tenon's makespan rose from 186-213 s
// (three runs) to 260-264 s (two), P50 from 124-143 s to 140-141 s:
// fewer agents overlap fewer model waits, and the controller's share did
// not shrink with them. Dropped.
//
// Nor does the host prioritize old agents' CPU. Tried (live, same case,
// each sandbox's v1 cpu.shares set by its agent's arrival rank among the
// live ones, halved or quartered per rank, so that agents started first
// take the contended CPU first and finish first, as under FIFO rather
// than processor sharing): makespan 211.6 and 225.3 s, P50 134.4 and
// 148.3 s, against 216.5 s and 122.7 s without, and the summed action
// time rose (3018-3113 s against 2514 s): the CPU that delays actions
// here is largely the host's own (page faults, reclaim, the controller),
// which the sandboxes' weights do not order. Dropped.
//
// Where the CPU goes now (fd0ae8e, batch18 twice at 1 GiB, time scale
// 0.2, the replay's memory compressing like real memory; tenon alone,
// /proc/stat and the bench process's and the sandboxes' CPU every 5 s,
// perf for 30 s): for its first 190 s the host was 93-100 % busy, the
// sandboxes using 1.2-1.55 cores and the controlling process 0.4-0.7
// (its largest share the teardown capture's hashing). 72 % of perf's
// samples were the sandboxes' `tenon tool mem` processes: of theirs a
// quarter page faults (costly under this host's PVM hypervisor), 14 %
// writing the random third of each new page, 16 % the tenon binary's
// package initialisation on each of the 2300 execs. The tools write what
// their curves ask, about 37 GiB over the run, five times as fast as in the
// traces' own time. So the sandboxes' own use stayed under CPUBusy of the
// 2 cores and pacing seldom held: 26-28 agents and 15-17 running actions
// at once in 30-90 s, where actions that took under 0.1 s under static-8
// (3.6 actions at once on average) took 12 times as long at the median
// (the three-policy run at 7c566b3, bench-traces-live-b18-noise). This,
// not memory, is where tenon's live P50 on batch18 trails static-8's, and
// it is partly the replay's: the compression speeds up the tools' CPU
// demand with their curves.
//
// Measured again with repetitions at 19af17c (bench/results/pacing-live.md,
// tenon alone at 1 GiB, no swap): on the haiku traces twice it is a trade,
// makespan 93.8 s and P50 28.4 s with it against 119.0 s and 20.6 s without
// (medians of three; without it the actions ran 45-53 % longer in sum); on
// swe-real (45 workflows) the slow start held 24 agents about 35 s, until
// memory pacing had closed, and cost makespan 141.3 against 135.6 s and P50
// 91.5 against 80.1 s (medians of five, overlapping ranges): there memory,
// not CPU, decides.

// DefaultCPUBusy is the share of the host's CPUs the sandboxes may use
// before agent pacing waits: below all of them, since the host's own
// work (the replay or daemon, reclaim and compression of swapped pages)
// takes some, and a smoothed use close to all of them is already queueing.
const DefaultCPUBusy = 0.8

// CPUWindow is the time constant of the smoothed CPU use, in gate periods
// (2 s at the default 100 ms period; the gate's period follows the
// replay's time scale, ScaledGate, and so does the window).
const CPUWindow = 20

// CPUPriorWindows is the weight of the per-agent prior (one core), in
// agent-windows of CPUWindow gate periods: 10 agents running for one
// window weigh as much as the prior.
const CPUPriorWindows = 10

// cpuLoad follows the cores the sandboxes use.
type cpuLoad struct {
	at   time.Time                // last sample
	prev map[string]time.Duration // CPU time per sandbox at it
	busy float64                  // smoothed cores in use
	// used and agentTime sum the CPU time and agent-time over the samples
	// taken while the CPUs were not saturated.
	used, agentTime time.Duration
}

// observe takes one gate sample: the cores the sandboxes used since the
// last one (sandboxes new in this sample count from the next), folded into
// the moving average with time constant tau; while the average is below
// full cores it adds the CPU time and active agents' time to the per-agent
// measurement.
func (l *cpuLoad) observe(now time.Time, smp []gate.Sample, tau time.Duration, active int, full float64) {
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
		if active > 0 && l.busy < full {
			l.used += used
			l.agentTime += time.Duration(active) * dt
		}
	}
	l.at, l.prev = now, cur
}

// perAgent is the cores an agent uses on average while it runs: the
// measured CPU time per agent-second, with a prior of one core worth
// CPUPriorWindows windows of tau.
func (l *cpuLoad) perAgent(tau time.Duration) float64 {
	prior := float64(CPUPriorWindows) * float64(tau)
	return (prior + float64(l.used)) / (prior + float64(l.agentTime))
}

// cpuTau is the smoothed CPU use's time constant.
func (m *Machine) cpuTau() time.Duration { return CPUWindow * m.cfg.GateConfig.Period }

// cpuFull reports whether CPU pacing holds new agents back: the host's
// CPUs are known, and the sandboxes' smoothed use is at least CPUBusy of
// them, or one more agent at the average use would take the active
// agents past all of them.
func (m *Machine) cpuFull() bool {
	if m.cfg.CPUs <= 0 || m.cfg.CPUBusy <= 0 {
		return false
	}
	return m.cpu.busy >= m.cfg.CPUBusy*m.cfg.CPUs || float64(m.active+1)*m.cpu.perAgent(m.cpuTau()) > m.cfg.CPUs
}

// CPUBusy is the sandboxes' smoothed CPU use in cores (0 before two gate
// samples). Nothing logs it yet; the tests read it.
func (m *Machine) CPUBusy() float64 { return m.cpu.busy }

// CPUPerAgent is the cores an agent is expected to use on average (read
// by the tests, as CPUBusy).
func (m *Machine) CPUPerAgent() float64 { return m.cpu.perAgent(m.cpuTau()) }
