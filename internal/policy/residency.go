package policy

import (
	"fmt"
	"sort"
	"time"

	"github.com/tenon-dev/tenon/internal/gate"
)

// IdleSandbox is a resident sandbox whose agent is waiting (between actions).
type IdleSandbox struct {
	ID            string // the agent id
	WorkingSet    int64  // measured at the boundary
	Restartable   bool   // verdict of the last boundary
	IdleSince     time.Time
	PredictedWait time.Duration // predicted model wait from IdleSince; 0 = unknown
	TeardownCost  time.Duration // measured (EWMA) teardown duration
	RematCost     time.Duration // measured (EWMA) rematerialization duration
	// PagedOut: its memory is already paged out; a page-out frees nothing
	// more (a teardown still may).
	PagedOut bool
	// PageFrees is what a page-out would free, bytes: the working set less
	// what its compressed copy costs the domain (zram's mem_used counts
	// against the budget too). 0: nothing to page out.
	PageFrees int64
	// PageInCost is the expected time to bring the paged-out memory back
	// before the next action.
	PageInCost time.Duration
	// Stalled is how long the sandbox has run nothing although its agent
	// is not in a model wait: its action waits for admission, or the gate
	// froze it mid-action. 0: the agent is in a model wait. Such a sandbox
	// may be admitted or thawed at any moment, so it is only paged out
	// (faulted back before it runs), only in red, and only once it has
	// stalled ResidencyConfig.Stall: then admission and the frozen actions
	// wait for memory that stalled sandboxes hold. One whose page-in takes
	// longer (PageInCost) waits that long instead, as a ski rental: the
	// gate's next thaw undoes a page-out at once, so paging out a frozen
	// 3 GiB sandbox a second into its stall and faulting it back in 6 s
	// each time the gate flapped out of red cost more than the waits did
	// (the simulator, batch18 twice at 4 GiB on v2: 47,686 page-outs, one
	// action timed out, 2501 s; with the rule 4763, none, 1698 s; over the
	// 72 runs of traces-sim.md's budgets and orders makespan +0.06 % and
	// P50 -0.03 % on v1, -0.35 % and +1.8 % on v2, single runs moving up
	// to 20 % either way).
	Stalled time.Duration
}

// StallPageOut is ResidencyConfig.Stall's default: ten of the gate's
// default periods, past its short freezes.
const StallPageOut = time.Second

// ReclaimKind is how an idle sandbox gives its memory back.
type ReclaimKind int

const (
	// ReclaimTeardown captures and destroys a restart-safe sandbox; it is
	// rematerialized before its next action.
	ReclaimTeardown ReclaimKind = iota
	// ReclaimPageOut freezes the sandbox and pages its anonymous memory out
	// to compressed swap and drops its clean page cache; it is thawed and
	// faulted back before its next action. It works for sandboxes that are
	// not restart-safe (a background process lives).
	ReclaimPageOut
)

func (k ReclaimKind) String() string {
	if k == ReclaimPageOut {
		return "page-out"
	}
	return "teardown"
}

// ReclaimDecision says to reclaim one idle sandbox.
type ReclaimDecision struct {
	ID         string
	Kind       ReclaimKind
	WorkingSet int64
	Frees      int64 // bytes the reclaim is expected to free
	Reason     string
}

// ResidencyConfig tunes DecideReclaim.
type ResidencyConfig struct {
	// AlwaysResident disables reclaim entirely (the ablation).
	AlwaysResident bool
	// GreenAmortize: in green a sandbox is reclaimed only when its
	// remaining predicted wait is at least GreenAmortize × the cost of
	// bringing it back. 0 means 1.
	GreenAmortize float64
	// GreenMinWorkingSet: in green, sandboxes smaller than this are retained.
	GreenMinWorkingSet int64
	// PageOut enables the page-out tier (the host has compressed swap).
	PageOut bool
	// MinPageOut: a page-out that frees less than this is not worth its
	// page-in; 0 means DefaultMinPageOut.
	MinPageOut int64
	// Stall is how long a sandbox must have stalled (IdleSandbox.Stalled)
	// before red pages it out; 0 means StallPageOut. Hosts give it ten gate
	// periods (a compressed replay's gate runs faster).
	Stall time.Duration
	// Plentiful is the share of the budget that, free in green, keeps every
	// idle sandbox resident whatever its predicted wait (0:
	// PlentifulShare; negative: never, green reclaims by amortization
	// alone).
	Plentiful float64
}

// PlentifulShare is ResidencyConfig.Plentiful's default. While half the
// budget is free nothing needs the memory an idle sandbox holds, and
// reclaiming it only makes its agent's next action wait for the page-in
// or the rematerialization: on the real traces at a budget they never
// fill (64 GiB), green reclaim by amortization alone added 8 % to tenon's
// median workflow time (batch18 ×2: P50 276.0 s against Eager's 255.3;
// with the rule both 255.3-255.4), and over the 72 simulated real-trace
// runs of bench/traces-sim.sh it changed the summed makespan by about
// −1 % and the summed P50 by about +2 % (bench/results/traces-sim.md).
const PlentifulShare = 0.5

// DefaultMinPageOut is ResidencyConfig.MinPageOut's default: a page-out
// frees at least 1 MiB (256 pages), or its freeze, reclaim and thaw are
// not worth making. It was 4 MiB, above what a page-out of the process
// backend's idle sandboxes frees (a 5 MiB floor, 3.4 MiB of it freed):
// red tore those down instead, for a capture and a rematerialization on
// their agents' paths (0.25-0.5 s, and two lifecycle slots to wait for)
// where a page-in takes 0.02 s. Replaying batch18 twice live at 1 GiB
// with zram, tenon alone, four runs each interleaved: 1 MiB made 43-58
// teardowns and 364-517 page-outs (4 MiB: 113-140 and 93-98), makespan
// 96.4-99.3 s against 101.5-102.1 s, P50 47.0-50.0 s against 53.0-58.0 s,
// no OOM kill either way. In the simulator, at the traces' own time, the
// 1 MiB minimum alone changed the 72 runs of bench/traces-sim.sh by +0.3 %
// makespan and +3.3 % P50 (v1; v2 -0.0 % and +1.2 %) and, with every
// trace three times at 512 MiB on v2, made an OOM kill where 4 MiB made
// none: a page-out keeps a compressed third, a teardown frees it all.
// With best's rule (a restart-safe sandbox whose wait pays for its
// teardown is torn down) the 72 runs moved +0.6 % and +1.7 % (v1), +0.7
// % and -0.4 % (v2), without a kill, and 12 heavier runs of
// bench/traces-robust.sh's shape (three copies, 512 MiB to 1 GiB, v1 and
// v2; without swap nothing changes) took 6.1 % less summed makespan and
// 5.2 % more summed P50 than with 4 MiB, without a kill. Live (as above,
// with the separate paging slots of residency.Manager.slotsFor) the rule
// changed little: four runs 98.0-106.9 s, P50 46.9-52.3 s (the slowest
// beside unit tests), against 97.3-98.0 s, 44.7-46.7 s without it (three
// runs alone) and 101.5-110.1 s, 53.0-62.4 s with 4 MiB and one pool of
// slots (three runs).
//
// It is a trade, not a gain everywhere: haiku twice at 2 GiB, tenon alone,
// two runs each interleaved, took 139.4 and 141.7 s (P50 53.1, 42.6 s)
// with both rules against 126.0 and 133.2 s (40.0, 43.3 s) at 2d170d9,
// with 198-223 page-outs against 33-42 and as many teardowns (54-58).
//
// Both are in the live replay's compressed time (twelvefold: model waits
// of 0.2 s at the median, below a teardown's way back); at the traces'
// own time a model wait is seconds long, pays for more teardowns, and
// the minimum matters less.
const DefaultMinPageOut = 1 << 20

// option is one way to reclaim an idle sandbox: what it frees and what it
// costs the agent when it resumes.
type option struct {
	kind  ReclaimKind
	frees int64
	cost  time.Duration
}

// better reports whether o frees more bytes per second of expected delay
// than p (ties: more bytes).
func (o option) better(p option) bool {
	// o.frees/o.cost > p.frees/p.cost without dividing by zero.
	return float64(o.frees)*p.cost.Seconds() > float64(p.frees)*o.cost.Seconds() ||
		float64(o.frees)*p.cost.Seconds() == float64(p.frees)*o.cost.Seconds() && o.frees > p.frees
}

// best is the sandbox's way to reclaim, if any: teardown when it is
// restart-safe (frees the whole working set, costs teardown plus
// rematerialization), page-out when the tier is on and the sandbox is not
// paged out yet (frees PageFrees, costs PageInCost). Where both are open,
// teardown when the remaining predicted wait is at least k times its cost
// (the wait pays for it, and it frees the compressed copy a page-out
// keeps), else the cheaper per byte freed (bytes per second of the way
// back), nearly always the page-out.
func (s IdleSandbox) best(cfg ResidencyConfig, remaining time.Duration, k float64) (option, bool) {
	var opts []option
	if s.Restartable && s.Stalled == 0 {
		opts = append(opts, option{ReclaimTeardown, s.WorkingSet, s.TeardownCost + s.RematCost})
	}
	minPage := cfg.MinPageOut
	if minPage <= 0 {
		minPage = DefaultMinPageOut
	}
	if cfg.PageOut && !s.PagedOut && s.PageFrees >= minPage {
		opts = append(opts, option{ReclaimPageOut, s.PageFrees, s.PageInCost})
	}
	if len(opts) == 0 {
		return option{}, false
	}
	if len(opts) == 2 && s.waitPays(remaining, k, opts[0].cost) {
		return opts[0], true // the teardown: all of it freed
	}
	b := opts[0]
	for _, o := range opts[1:] {
		if o.better(b) {
			b = o
		}
	}
	return b, true
}

// waitPays reports whether the sandbox's remaining predicted wait (known,
// not over) is at least k times cost, the way back of a reclaim.
func (s IdleSandbox) waitPays(remaining time.Duration, k float64, cost time.Duration) bool {
	return s.PredictedWait > 0 && remaining > 0 && float64(remaining) >= k*float64(cost)
}

// DecideReclaim returns the idle sandboxes to reclaim now, in the order to
// reclaim them (decreasing bytes freed, then id), each by its cheapest way
// per byte freed (teardown for restart-safe ones, page-out with the tier
// on). A sandbox that is neither restart-safe nor pageable is never chosen.
// free is the domain's free memory as a share of its budget at the last
// observation (negative: unknown). Green with at least cfg.Plentiful of
// the budget free: retain every one (memory is plentiful). Green
// otherwise, and yellow: retain, unless the remaining predicted wait
// amortizes the cost of bringing it back. Red, and yellow for a sandbox
// whose wait is unknown: reclaim for the pressure, as much as need asks.
//
// need is the memory, bytes, the pressure asks reclaim to free
// (Machine.ReclaimNeed less what reclaims under way will free); negative
// is unknown, and the pressure reclaims every candidate. Otherwise the
// reclaims whose wait amortizes are made whatever need is and count
// toward it, and the pressure takes the other candidates cheapest per
// byte first (bytes freed per second of the way back, as best chooses)
// until their frees cover need.
//
// Yellow amortizes too because a reclaim whose wait is shorter than the
// way back gives its memory back for less time than its agent then waits
// for it: replaying the imported real traces live, compressed twelvefold
// (batch18 at 1 GiB, model waits of 0.15-0.22 s at the median), yellow
// tore down or paged out the idle sandbox at 723 of 2258 boundaries, 4-5
// MiB each, and each cost its agent 1.3-1.5 s at the median (the lifecycle
// slots queue). At the traces' own time the waits are seconds long and
// amortize; a wait that ends sooner than the way back is rare there.
//
// Tried, not adopted (2026-12-07): expecting the rest of a wait from the
// waits seen, E[W - t | W > t] over the latest 512 waits scaled by the
// agent's own average (model waits cluster at the model's latency and
// have a long tail: in batch18 a wait just begun has 2.9 s to go on
// average, one that lasted 4 s 5.9 s, one that lasted 8 s 14 s), and
// keeping in red too a sandbox expected back before its way back. Live,
// batch18 ×2 at 1 GiB compressed twelvefold with zram, tenon alone, two
// interleaved runs each: red had torn down 154-167 sandboxes a run, at a
// median 0.05 s before their agent's next action was due by the trace,
// each delaying it 1.3 s at the median, 3.2 s at P90 (two lifecycle
// slots); the
// expectation alone changed nothing (111.1 and 103.8 s, P50 63.3 and
// 60.2 s, against 110.6 and 105.4 s, 64.1 and 58.6 s); with the keeping,
// 0-1 teardowns (page-outs, the cheaper way back, took their place), 95.6
// and 97.9 s, P50 43.6 and 48.8 s, no OOM kill. But in the simulator at
// 512 MiB with three copies of the traces on cgroup v2 the kept sandboxes
// held memory a waiting 400 MiB action, or fifty waiting actions, lacked
// until the freezing hold gave up: 1-5 OOM kills over eight arrival
// orders where tenon had none, also when they went to what waiting work
// lacked (every waiting action's peak, or all while the hold waited or
// the gate held an action back). At the traces' own time the 72 runs of
// bench/traces-sim.sh moved -1.5 to +0.8 % in makespan, -2.1 to +2.9 %
// in P50, without a kill. (Binaries built from the uncommitted change on
// c9d8e80; the change is not in the repository.) Taking the quicker way
// back (a page-out) for a sandbox expected back soon changes nothing
// there: the torn-down sandboxes held 5 MiB, whose page-out would free
// less than DefaultMinPageOut, and the simulator already pages out
// whatever it can (its page-in is the better way per byte).
func DecideReclaim(now time.Time, p gate.Pressure, free float64, need int64, idle []IdleSandbox, cfg ResidencyConfig) []ReclaimDecision {
	if cfg.AlwaysResident || p == gate.Green && plentiful(free, cfg) {
		return nil
	}
	k := cfg.GreenAmortize
	if k <= 0 {
		k = 1
	}
	stall := cfg.Stall
	if stall <= 0 {
		stall = StallPageOut
	}
	type candidate struct {
		d ReclaimDecision
		o option
	}
	var out []ReclaimDecision
	var pressed []candidate // reclaims for the pressure alone
	for _, s := range idle {
		remaining := s.PredictedWait - now.Sub(s.IdleSince)
		o, ok := s.best(cfg, remaining, k)
		if !ok || s.Stalled > 0 && (p != gate.Red || s.Stalled < max(stall, s.PageInCost)) {
			continue
		}
		d := ReclaimDecision{ID: s.ID, Kind: o.kind, WorkingSet: s.WorkingSet, Frees: o.frees}
		amortizes := s.Stalled == 0 && s.waitPays(remaining, k, o.cost) &&
			(p != gate.Green || s.WorkingSet >= cfg.GreenMinWorkingSet)
		switch {
		case amortizes:
			d.Reason = fmt.Sprintf("%v: remaining wait %v amortizes the %v's cost %v", p, remaining, o.kind, o.cost)
			out = append(out, d)
		case p == gate.Red || p == gate.Yellow && s.PredictedWait <= 0:
			d.Reason = p.String() + " pressure"
			pressed = append(pressed, candidate{d, o})
		}
	}
	bounded := need >= 0
	if bounded {
		for _, d := range out {
			need -= d.Frees
		}
		sort.SliceStable(pressed, func(i, j int) bool {
			a, b := pressed[i], pressed[j]
			switch {
			case a.o.better(b.o):
				return true
			case b.o.better(a.o):
				return false
			}
			return a.d.ID < b.d.ID
		})
	}
	for _, c := range pressed {
		if bounded && need <= 0 {
			break
		}
		need -= c.d.Frees
		out = append(out, c.d)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Frees != out[j].Frees {
			return out[i].Frees > out[j].Frees
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// ReclaimPressure is the pressure residency reclaims idle sandboxes at:
// p, but red where p is yellow while actions wait for admission (waiting
// > 0) and the page-out tier is on (pageOut). Admission refuses an action
// when its predicted peak does not fit what is physically free, so a
// waiting action is memory that resident idle sandboxes keep from running
// work; yellow alone reclaims only the sandboxes whose predicted wait
// amortizes the way back, and the action waits for the rest to leave on
// their own. A page-out's way back is a page-in, a fraction of a second
// for the idle floors of real agents. Green is left alone (memory is not
// short: the action waits for the logical check or for running actions'
// predicted growth, which reclaim does not shorten), and so are
// rematerializations and page-ins, which still go by p. Without swap the
// only reclaim is a teardown, whose way back, a rematerialization, waits
// out red: there the rule is off.
//
// On the 72 simulated real-trace runs of bench/traces-sim.sh (two sets,
// six arrival orders, 768 MiB to 4 GiB) the rule took the summed makespan
// -2.1 % and the summed P50 -3.4 % on v1 (v2: +0.0 %, -4.4 %), with no
// OOM kill; applied without swap too it gained -0.1 % and -0.5 % there
// with 5 OOM kills against 3; the generated workloads did not move.
func ReclaimPressure(p gate.Pressure, waiting int, pageOut bool) gate.Pressure {
	if p == gate.Yellow && waiting > 0 && pageOut {
		return gate.Red
	}
	return p
}

// plentiful reports whether free (a share of the budget, negative when
// unknown) is at least cfg.Plentiful (PlentifulShare by default).
func plentiful(free float64, cfg ResidencyConfig) bool {
	share := cfg.Plentiful
	if share == 0 {
		share = PlentifulShare
	}
	return share > 0 && free >= 0 && free >= share
}

// MayRematerialize reports whether a rematerialization (or a page-in) may
// start now: predictive (speculative) ones only in green, demand-driven
// ones (the next action is ready) in green and yellow, none in red.
//
// Red blocks restores of a few MiB too, and agents whose next action is
// ready wait while running actions hold red (27 s once, batch18 twice at
// 2 GiB in the simulator). Letting a demand-driven restore start in red
// where it fits admission's light-lane headroom moved that wait, not
// removed it: the gate froze the restored sandboxes' actions instead
// (there: time between a wait's end and admission 1219 -> 814 s, time
// frozen in actions 504 -> 642 s, P50 279 -> 287 s); over the 72 runs on
// pure cgroup v2, where red is the freezing hold's zone, +3.5 % makespan.
// Not adopted.
func MayRematerialize(p gate.Pressure, predictive bool) bool {
	switch p {
	case gate.Green:
		return true
	case gate.Yellow:
		return !predictive
	}
	return false
}
