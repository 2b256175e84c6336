// Package admission decides when a ready action may start (seed 000 §3.4,
// Figure 8): water-level-aware admission with light and heavy queues sharing
// one logical memory budget.
//
// Each admitted action holds a logical charge
//
//	M~ = (1 − α)·PredAvg + α·PredPeak,  α = clamp(M_admitted / MWindow, 0, 1)
//
// computed from the level M_admitted just before it is admitted, fixed at
// admission and released exactly once when the action completes (whether or
// not its sandbox stays resident). While the water level is low actions are
// charged near their predicted average; as it approaches MWindow they are
// charged their predicted peak. A charge is never more than the budget, so an
// action predicted larger than the whole budget still runs, alone.
//
// An action is heavy when its descriptor's HeavyRisk >= HeavyRisk or its
// predicted peak >= HeavyThreshold. Light actions go first, in arrival order,
// and a light action that does not fit is skipped rather than blocking those
// behind it (no head-of-line blocking). To keep a stream of light actions from
// starving heavy ones, the oldest waiting heavy action accrues protected
// credit at Beta bytes per second, capped at its predicted peak (at most the
// budget); light actions (and younger heavy ones) may only use the free
// budget beyond that credit. Once
// the credit covers the heavy action's peak, light actions stop taking the
// logical budget it needs, and on the logical check alone its wait is at
// most peak/Beta plus the time the running actions need to finish.
//
// The credit does not reserve physical headroom: a light action that fits
// the physical check beside it still runs, and its sandbox's floor (the
// memory it holds between actions, faulted back for the action) is memory
// the heavy one cannot have. On the real traces, where a few test runs
// need nearly the whole budget and dozens of agents hold floors, such an
// action waits until the others thin out: the haiku traces twice at 2 GiB
// (bench/traces-sim.sh) kept 1-1.8 GiB test runs queued 170-600 s, and
// tenon finished those four workflows last (1463.5 s, against 953.5 s at
// 1.5 GiB, where they are infeasible). Reserving the credit physically
// too (light actions admitted only where they fit beside it) made it
// worse there: 2460.9 s, every agent stalled behind an action that the
// idle floors, paged out to a third, still kept out; reserving it only
// while the owner would fit once the running actions ended (Machine's
// drained headroom): 1717.7 s, the floors of the sandboxes whose actions
// ended stayed. Both variants were dropped (the first had been dropped
// before too, over the 72 runs of traces-sim.md's grid: +39 %; README).
//
// Every admission also passes a physical check: the caller passes the
// observed available memory minus its safety margin, and an action is
// admitted only if its charge fits what remains of it after the actions
// admitted earlier in the same Schedule call. Waiting actions hold no charge.
//
// The light lane: light actions may also use the part of the safety margin
// the caller allows (Schedule's lightMargin); heavy ones never do. The margin
// absorbs what growers allocate between an observation and its enforcement;
// a light action is small by prediction, and if the prediction is wrong the
// gate sees it grow and the OOM hold holds its allocations at the budget.
// Without the lane, one heavy action at its peak empties the headroom above
// the margin and every small action waits behind it for the whole of its run,
// while the memory they need (a few MiB each on real agent traces) sits in
// the margin.
//
// Defaults (Config zero values), scaled to Budget as in the paper's 8 GB
// window bound on an 8 GB host: MWindow = Budget; Beta = Budget/60 per second
// (a heavy action that needs the whole budget has full protection after one
// minute); HeavyThreshold = Budget/8 (1 GiB on an 8 GiB budget, the paper's
// heavy line); HeavyRisk = 0.5.
//
// The package is pure logic handed the event time (New): Schedule is
// called by the controller on every boundary event and periodically; it
// never sleeps and touches no kernel interface. Wait is a blocking convenience for drivers
// that run one goroutine per workflow.
package admission
