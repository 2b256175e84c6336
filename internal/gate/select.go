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
func (c *Controller) selectPermitted(now time.Time, p Pressure, b int, headroom int64, prevGreen bool) {
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
	// waiting until that action ends, as a FIFO would.
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
	for _, e := range c.cand {
		e.probe = e == probe
	}
	if probe != nil {
		probe.inPrev = true
	}
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
