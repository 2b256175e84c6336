package policy

import (
	"iter"
	"slices"
	"time"

	"github.com/tenon-dev/tenon/internal/gate"
	"github.com/tenon-dev/tenon/internal/predict"
	"github.com/tenon-dev/tenon/internal/trajectory"
)

// This file holds the decision steps of tenon's admitter beyond seed 000
// (the physical check by predicted peaks, admission liveness, agent pacing,
// a retry reserving what its earlier attempt needed, and the gate's demand
// cap) as pure functions of observations and clock values: no goroutines,
// no sleeping, no locks. The Machine (machine.go, machine_admit.go)
// composes them.

// LivenessWait is how long the oldest queued action waits while no
// admitted action runs before it is admitted on the logical check alone.
const LivenessWait = 2 * time.Second

// Admitted is one admitted action as the physical check sees it.
type Admitted struct {
	Before int64 // sandbox memory when the action was admitted, bytes
	Memory int64 // sandbox memory now (Before when it cannot be read)
	Peak   int64 // predicted peak above Before
	Charge int64 // admission charge
}

// RemainingGrowth is the growth a is still predicted to make: its predicted
// peak (or its charge, if larger) less what it has grown since admission,
// at least 0.
func RemainingGrowth(a Admitted) int64 {
	return max(max(a.Peak, a.Charge)-max(a.Memory-a.Before, 0), 0)
}

// Returning is what an admitted action's sandbox takes back before the
// action grows: the part of its level at admission it does not hold now
// (it was paged out while the action waited, and is faulted back first).
// A waiting action's own return is not part of its physical check: counting
// it (its floor less what its sandbox holds now, beside its predicted
// peak) made admission wait for memory the light lane and the OOM hold
// would have covered, over the 72 simulated real-trace runs of
// bench/traces-sim.sh +3.1 % makespan (+7-30 % for the haiku traces at
// 768 MiB to 1.5 GiB), P50 +1.2 %, no kill either way.
func Returning(a Admitted) int64 { return max(a.Before-a.Memory, 0) }

// PhysicalHeadroom is admission's physical headroom: the domain's available
// memory, less the safety margin, less the growth running admitted actions
// are still predicted to make (the part they have grown is already in
// available) and what their sandboxes take back from swap (Returning). The logical water level interpolates charges between average
// and peak; the physical check is about memory that will really be needed,
// so it counts peaks.
func PhysicalHeadroom(available, margin int64, admitted iter.Seq[Admitted]) int64 {
	var pending int64
	for a := range admitted {
		pending += RemainingGrowth(a) + Returning(a)
	}
	return available - margin - pending
}

// Queued is the oldest action waiting for admission.
type Queued struct {
	Enqueued time.Time
	Peak     int64 // its predicted peak
}

// LivenessHeadroom raises phys so that the oldest queued action fits once
// it has waited LivenessWait while no admitted action runs: waiting cannot
// free memory that idle sandboxes hold, so the physical check alone would
// keep every queued action out forever. oldest is nil when nothing is
// queued.
//
// Live, it is also how an action that cannot fit starts a deadlock of
// idle floors: on swe-real at 1 GiB without swap (seed 1, before the
// generator's restartable retained memory, 574de96) an 800 MiB test
// rolled back by the hold was admitted here once no action ran for a
// moment, with 420-680 MiB of idle floors beside it, and the hold then
// preempted 11-13 idle attempts one by one, 2 s apart, to make room.
// Tried in the simulator, not adopted (288 runs of hold_preempt.go's
// grid): raising phys only when every started attempt waits in admission
// left 80 workflows of haiku three times at 512 MiB without swap
// unfinished (attempts torn down and waiting to come back never queue)
// and made batch18 at 4 GiB, whose 3.5 GiB actions are often predicted
// above their need, 1061 -> 1406 s; sparing only an action rolled back
// in its attempt whose shortfall exceeds the largest idle sandbox (unless
// every attempt waits) kept the 80 unfinished, summed makespan v1 +0.2 %,
// v2 +1.4 %, without swap -0.3 %, swe-real without swap -1.6 %, batch18
// at 4 GiB +2-11 % in 11 of 18 runs. A bound on how long it may be spared
// (so that the deadlock ends) was not tried.
func LivenessHeadroom(phys int64, running int, oldest *Queued, now time.Time) int64 {
	if running > 0 || oldest == nil || now.Sub(oldest.Enqueued) < LivenessWait {
		return phys
	}
	return max(phys, oldest.Peak)
}

// PacingOpen is the part of agent pacing shared by every new agent: true
// when no agent runs, or when no action that blocks pacing waits for
// admission (queued counts them; the Machine passes 1 for any:
// Machine.pacingBlocked) and the gate (Green when it is off) reports
// green. Every agent started holds memory
// in its sandbox until its workflow ends, so starting agents faster than
// memory allows turns into actions that can never be admitted.
//
// A waiting action blocks pacing when it is light, or heavy and would fit
// once the running actions ended (the free memory less admission's margin
// plus what they have grown): then their ends admit it, and agents started
// meanwhile would take that memory. A heavy action that would not fit
// even then waits for agents to end (their floors), and every agent
// waiting with it stalled whole runs: in the simulator on the haiku traces
// three times at 2 GiB (bench/results/traces-robust.md), test runs of 1.6
// and 1.8 GiB waited in turn while 77 agents stayed queued for 1000 s with
// 1.6 GiB free (P50 1164 s on v1, against 249 s on v2, where their order
// differed; 481 s with this rule). Admission's heavy lane keeps such an
// action first among the heavy ones, the physical check still counts the
// floors new agents hold, and liveness admits it once nothing runs. Over
// traces-robust.md's 48 runs the rule took tenon's summed makespan -2.6 %
// and P50 -11 % (OOM kills 38 -> 40, all at 512 MiB without swap); over the
// 72 runs of traces-sim.md's grid -0.5 % on v1, 0 on v2, -0.7 % without
// swap (4 kills -> 3); the generated workloads (tenon bench --sim) did not
// move. Not blocking pacing for any heavy action gained more on the traces
// (P50 -16 %) but slowed the generated science case 11 %, where heavy
// actions fit soon.
func PacingOpen(active, queued int, p gate.Pressure) bool {
	return active == 0 || queued == 0 && p == gate.Green
}

// AgentMayStart is agent pacing: a new agent starts at once when no agent
// runs; otherwise when PacingOpen (queued: the actions waiting for
// admission that block pacing) and its first action's predicted peak need
// plus reserve (room for a heavy action of the agents already running) fits
// the physical headroom. headroom is called only when it decides.
func AgentMayStart(active, queued int, p gate.Pressure, headroom func() int64, need, reserve int64) bool {
	if active == 0 {
		return true
	}
	return PacingOpen(active, queued, p) && headroom() >= need+reserve
}

// FirstPeak is the predicted peak of a workflow's first action with no
// history, the need AgentMayStart checks (0 without an action).
func FirstPeak(pred predict.Predictor, workflow string, first *trajectory.Action) int64 {
	if first == nil {
		return 0
	}
	return pred.Predict(predict.ContextFor(workflow, *first, nil, 0)).PredPeak
}

// ActionKey names one action of one workflow, across attempts.
type ActionKey struct {
	Workflow string
	Index    int
}

// RetryReserve holds, per workflow action, what an earlier attempt of the
// same action measured: its growth above the level before it, and after an
// OOM kill at least 1.5 times what was predicted then. A retry reserves at
// least that; the earlier attempt is past, so this stays causal. The zero
// value is not usable: make one with make(RetryReserve).
type RetryReserve map[ActionKey]int64

// Learn records what an attempt of action k grew; predicted is the peak
// its descriptor predicted.
func (r RetryReserve) Learn(k ActionKey, grown, predicted int64, oom bool) {
	if oom {
		grown = max(grown, predicted*3/2)
	}
	r[k] = max(r[k], grown)
}

// Apply raises d to what an earlier attempt of action k needed: its peak to
// the learned growth, its average to at least 4/5 of that, and marks it
// heavy-risk. d is unchanged when nothing larger was learned.
func (r RetryReserve) Apply(k ActionKey, d predict.Descriptor) predict.Descriptor {
	if l, ok := r[k]; ok {
		return raiseTo(d, l)
	}
	return d
}

// raiseTo raises d to a learned growth l when l exceeds its peak: its peak
// to l, its average to at least 4/5 of l, and marks it heavy-risk.
func raiseTo(d predict.Descriptor, l int64) predict.Descriptor {
	if l > d.PredPeak {
		d.PredPeak, d.PredAvg, d.HeavyRisk = l, max(d.PredAvg, l*4/5), max(d.HeavyRisk, 1)
	}
	return d
}

// DemandCap is the gate's cap on a sandbox's projected demand when
// admission is on. A sandbox running no admitted action (a nil) has nothing
// left to grow for: cap 0. One whose action is still below its predicted
// peak may grow by the rest, at least boot (the gate's bootstrap demand).
// One that outgrew its prediction gets no cap (has is false): the
// prediction was wrong and the gate's own estimate rules.
//
// Tried, not adopted (4c94f63, reverted): letting the gate allow a denied
// sandbox whose admitted action is within its prediction where that cap
// still fits the available memory less admission's margin and the
// projected demand of the sandboxes the gate allows, oldest admission
// first. It answered red held by long actions' projected demand while
// agents whose next action was ready waited (batch18 twice at 2 GiB in
// the simulator: P50 326 -> 287 s; Eager 255 s with 5 kills), and over
// bench/traces-sim.sh's 72 runs it took the summed makespan -0.6 % (v1),
// -1.9 % (no swap), -2.1 % (v2), P50 +0.3, -1.8, -0.8 %. But over
// bench/traces-robust.sh's 48 heavier runs tenon had 4 OOM kills and an
// action timeout against none (at 512 MiB on v2, three copies), summed
// makespan +3.7 %, P50 +12 %; kept off v2, no kill but +0.9 % and +7.5 %.
// Allowing every admitted action within its prediction, whatever was
// free, rolled back and preempted far more on v2 (haiku twice at 2 GiB:
// 26 rollbacks and 9 preemptions against 6 and 1, 1680 -> 2756 s).
func DemandCap(a *Admitted, boot int64) (limit int64, has bool) {
	if a == nil {
		return 0, true
	}
	left := max(a.Peak, a.Charge) - (a.Memory - a.Before)
	return max(left, boot), left > 0
}

// floorHistory is how many ended attempts' floors PredictFloor looks at.
const floorHistory = 256

// PredictFloor is the floor a new agent's sandbox is predicted to keep
// while its agent waits: the median of the floors measured so far, of
// attempts that ended (ended, their last) and of started ones (live,
// their latest); 0 before any was measured. Floors grow over an attempt
// (files written, caches filled, processes left running), so the live
// ones pull the estimate down early in a run and the ended ones pull it
// up as the run goes on.
func PredictFloor(ended, live []int64) int64 {
	all := make([]int64, 0, len(ended)+len(live))
	all = append(all, ended...)
	all = append(all, live...)
	if len(all) == 0 {
		return 0
	}
	slices.Sort(all)
	return all[len(all)/2]
}

// OwedFloor is what a started agent between actions owes its floor: when
// its sandbox holds less than its floor (paged out, or torn down: not
// readable, ok false) it takes the rest back before its next action, so new
// agents must not be started into that memory.
func OwedFloor(floor, mem int64, ok bool) int64 {
	if !ok {
		mem = 0
	}
	return max(floor-mem, 0)
}
