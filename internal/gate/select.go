package gate

import (
	"cmp"
	"slices"
	"time"
)

// selectPermitted is step 6 (Algorithm 1 lines 4–16). It sets e.inPrev to
// membership of the new permitted set A for every live sandbox.
//
// prevGreen says the previous iteration was green: its permissions were the
// blanket allow of green, not a selection, so nobody holds a slot from it.
func (c *Controller) selectPermitted(now time.Time, p Pressure, b int, headroom, avail, red int64, prevGreen bool) {
	if p == Green {
		// Green allows every live sandbox; growth-window, contributor-count
		// and denial-waiting restrictions are bypassed.
		for _, e := range c.live {
			e.inPrev, e.probe = true, false
		}
		return
	}
	c.cand = c.cand[:0]
	for _, e := range c.live {
		e.inPrev = false
		e.sticky = e.allowed && !c.cfg.NoSticky
		e.holding = e.sticky && !prevGreen && now.Sub(e.allowedAt) < c.cfg.DMax
		e.senior = 0
		if !c.cfg.NoSeniority && e.grown >= c.cfg.BootstrapDemand {
			e.senior = e.grown
		}
		if !e.timerSet {
			e.overdue, e.rank = false, e.state.rank()
			c.cand = append(c.cand, e)
		} else if waited := now.Sub(e.deniedSince); waited >= c.cfg.DMin {
			e.overdue, e.rank = waited >= c.cfg.DMax, e.state.rank()
			c.cand = append(c.cand, e)
		}
	}
	slices.SortFunc(c.cand, candidateOrder)

	k := growthSlots(p, b, len(c.cand), c.cfg.HeldBudget)
	var r int64
	n := 0
	blocked := false // a senior grower did not fit: no junior grows past it
	for _, e := range c.cand {
		x := 0
		if e.demand > 0 {
			x = 1
		}
		if blocked && x == 1 {
			continue
		}
		need := e.demand
		if e.holding {
			// A holder is re-checked every period, so it only has to fit
			// the growth it can make before the next decision lands (two
			// periods); the horizon T is for starting new growth.
			need = min(need, e.est.demand(2*c.cfg.Period, c.cfg.BootstrapDemand))
		}
		if need <= headroom-r && n+x <= k {
			e.inPrev = true
			r += need
			n += x
		} else if x == 1 && e.senior > 0 {
			blocked = true
		}
	}
	// Liveness escape (an extension of Algorithm 1): when no sandbox with
	// positive demand is permitted, no action that is still growing can
	// finish and release its memory (and admission charge); if the denied
	// sandboxes' own memory keeps H below every demand, Algorithm 1 would
	// deny them forever. The first overdue candidate with positive demand
	// then runs as the single probe (with seniority, the first senior one,
	// overdue or not, ahead of any overdue junior): growth is still bounded
	// by one sandbox, and the kernel's limit (or the OOM hold) remains the
	// backstop. An overdue probe's denial has already lasted DMax; a senior
	// runs at once because it has the most memory invested and freezing it
	// frees nothing (in the simulator, without the hold, waiting DMax for
	// the senior gave more kills: 29 vs 23 on the bundled workload).
	//
	// With stickiness on, the escape's probe keeps running while the escape
	// is needed and it makes progress (its CPU time advanced): a probe
	// replaced every period by the next overdue sandbox grows for one period
	// and is frozen again, and no action ever finishes. A probe that burns no
	// CPU — one waiting for memory at the budget under the OOM hold, say —
	// gives the slot to the next overdue sandbox, which may finish and free
	// memory for it. A senior stays the probe even then: what it waits for
	// is most likely memory that only a finishing action frees, and juniors
	// let run would allocate into the same full budget (in the simulator,
	// demoting a senior stalled for DMax gave 0–13 more kills per bench
	// workload). A senior that idles inside its action keeps the juniors
	// waiting until that action ends, as a FIFO would, unless memory is
	// not at the budget: then one junior drains beside it (juniorDrain).
	var probe *entry
	if n == 0 && !c.cfg.NoLivenessEscape {
		for _, e := range c.cand {
			if e.demand <= 0 {
				continue
			}
			if e.probe && e.sticky && e.progressed {
				probe = e
				break
			}
			if (e.overdue || e.senior > 0) && probe == nil {
				probe = e
			}
		}
	}
	drain := c.juniorDrain(probe, avail, red)
	for _, e := range c.cand {
		e.probe, e.drain = e == probe, e == drain
	}
	if probe != nil {
		probe.inPrev = true
	}
	if drain != nil {
		drain.inPrev = true
	}
}

// juniorDrain returns the junior the junior drain runs beside the liveness
// escape's probe, or nil (an extension of the escape).
//
// The escape keeps a senior as the probe when it stops using CPU (see
// above): what it waits for is most likely memory that only a finishing
// action frees. But a senior that was allowed and did not move while
// memory is not at the budget waits for something no junior takes from
// it: it rests at its peak inside its action (rest decay is off while
// memory alone is red), or it was paged out while the gate froze it and
// the memory it must fault back in is more than is free, so it stays
// frozen. Every junior then waits for the senior's action to end, with
// the domain's free memory unused: in the simulator on batch18 twice at
// 2 GiB (bench/traces-sim.sh's replication) a senior paged out from 422
// to 140 MiB could not fault back with 234 MiB free, the gate stayed red
// 22 MiB below the red line for 65 s, and eight actions of 0-4 s
// (demands of 5-86 MiB) stayed frozen beside it until a 69 s action
// elsewhere ended (makespan 878.3 s, P50 355.8 s; with the drain 839.1 s
// and 290.6 s, Eager's P50 255.3 s).
//
// So where the probe is a senior that was allowed in the last period and
// used no CPU, and free memory is at least half the red region (not at
// the budget, where it waits for the memory a junior would take), one
// junior runs beside it: the first overdue one in candidate order whose
// demand is at most half of what is free. It keeps the drain while it
// progresses, as the probe does, and the next overdue junior takes it
// when it stops. An action that ends leaves its sandbox idle, and
// residency reclaims it in red, which is memory the senior can have.
//
// Over the simulator's grids of the two real trace sets (traces-sim.md's
// 72 runs on v1, without swap and on v2; traces-robust.md's 48; the same
// sets three times at 512 MiB-3 GiB in three other orders, 72 runs) and
// the generated workloads (4 kinds, 3 seeds, 12 and 40 workflows, 1-4
// GiB: 72 runs), tenon's summed makespan moved +0.2 / -0.3 / -0.6 % (v1 /
// no swap / v2) and its summed P50 -0.8 / +0.5 / -0.6 %; traces-robust's
// OOM kills went 3 -> 0 (batch18 three times at 512 MiB on v2), its
// makespan +0.0 / +0.7 / +2.0 %; the heavier grid -2.8 / +1.8 / -1.3 %,
// its kills unchanged (2 on v2, now in one run); the generated workloads
// did not move. No gain in the sums, then: these runs are chaotic (one
// preemption more or less moves a run by hundreds of seconds), and the
// drain is kept for the stall it ends, where the juniors' wait was
// bounded only by the end of an unrelated action. A drained junior that
// grows into a senior (past the bootstrap demand) or fits the headroom
// is a permitted grower like any other: it holds its slot for DMax and
// may then be the probe. Two variants moved the same grids by noise:
// keeping the drained junior behind the senior (v2 +2.0 %, robust 1
// kill) and, with that, letting it keep the drain once a senior (v2
// +0.9 %, robust 0 kills, the heavier grid 5 kills on v2). Without the
// guard on free memory the drain also ran beside a senior waiting at the
// budget (8 MiB free): the heavier grid without swap +3.3 %.
func (c *Controller) juniorDrain(probe *entry, avail, red int64) *entry {
	if c.cfg.NoJuniorDrain || probe == nil || probe.senior == 0 || !probe.sticky || probe.progressed || avail < red/2 {
		return nil
	}
	var drain *entry
	for _, e := range c.cand {
		if e == probe || e.demand <= 0 || e.senior > 0 {
			continue
		}
		if e.drain && e.sticky && e.progressed {
			return e
		}
		if e.overdue && drain == nil && e.demand <= avail/2 {
			drain = e
		}
	}
	return drain
}

// candidateOrder orders eligible candidates: overdue ones (denied for at
// least DMax) first, longest-denied first; then the rest by the Table 5
// state preference (Resident, Cooling, Growing/PausedGrowing). Within either
// group smaller projected demand and then the identifier break ties. It
// reads the holding, overdue, rank and sticky keys selectPermitted computed.
//
// Stickiness extends Table 5's order: a sandbox permitted in the previous
// iteration comes first within its rank, and one permitted for less than
// DMax (holding its slot) comes before every other candidate, overdue ones
// included. Without it a grower that is already running is frozen
// half-grown whenever a denied one has a smaller projection or turns
// overdue; with several growers waiting, the slot rotates every few
// periods and partial growth spreads over sandboxes that then cannot all
// finish in the budget. The starvation bound becomes DMax of denial plus
// DMax per holder ahead.
//
// Seniority (see doc.go) comes right after holding: a candidate that has
// grown further in its current growth episode comes before every other
// non-holder, overdue ones and the state ranks included. A sandbox in no
// growth episode has seniority 0, so among those the order above applies.
func candidateOrder(a, b *entry) int {
	if a.holding != b.holding {
		if a.holding {
			return -1
		}
		return 1
	}
	if x := cmp.Compare(b.senior, a.senior); x != 0 {
		return x
	}
	switch {
	case a.overdue && !b.overdue:
		return -1
	case b.overdue && !a.overdue:
		return 1
	case a.overdue:
		if x := a.deniedSince.Compare(b.deniedSince); x != 0 {
			return x
		}
	default:
		if x := cmp.Compare(a.rank, b.rank); x != 0 {
			return x
		}
		if a.sticky != b.sticky {
			if a.sticky {
				return -1
			}
			return 1
		}
	}
	if x := cmp.Compare(a.demand, b.demand); x != 0 {
		return x
	}
	return cmp.Compare(a.id, b.id)
}

// growthSlots is K, the most positive-demand sandboxes one selection
// permits: 1 in red (the red drain), b in yellow, and in yellow on a held
// budget (Config.HeldBudget) every candidate, so only the headroom H bounds
// yellow's growth.
func growthSlots(p Pressure, b, candidates int, held bool) int {
	switch {
	case p != Yellow:
		return 1
	case held:
		return max(candidates, 1)
	}
	return b
}
