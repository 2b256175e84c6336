package gate

import (
	"cmp"
	"slices"
	"strconv"
	"time"
)

// entry is the controller's retained state for one live sandbox.
type entry struct {
	id          string
	est         estimator
	state       State
	demand      int64
	allowed     bool // the published permission (initially deny)
	inPrev      bool // member of A_prev
	timerSet    bool // τ is set: a denial episode is running
	deniedSince time.Time
	seen        uint64        // generation of the last snapshot that held it
	overdue     bool          // selection key: denied for at least DMax
	rank        int           // selection key: state preference
	sticky      bool          // selection key: permitted in the previous iteration
	holding     bool          // selection key: sticky and permitted for less than DMax
	probe       bool          // run by the liveness escape in the previous iteration
	drain       bool          // run by the junior drain in the previous iteration
	progressed  bool          // its CPU time advanced since the previous sample
	allowedAt   time.Time     // start of the current permitted episode
	foot        int64         // this iteration's footprint sample
	cpu         time.Duration // this iteration's CPU-time sample
	demandCap   int64         // this iteration's cap on demand; < 0 for none
	growBase    int64         // lowest footprint of the current growth episode
	grown       int64         // footprint above growBase
	senior      int64         // selection key: grown, or 0 without seniority
}

// Controller is Algorithm 1 of seed 000 with the Appendix B iteration order.
// It holds no locks: one goroutine calls Step.
type Controller struct {
	cfg     Config
	entries map[string]*entry
	live    []*entry // this iteration's live sandboxes, sorted by ID
	cand    []*entry // scratch: eligible candidates
	order   []int    // scratch: sample order
	budget  budget
	gen     uint64
}

// New returns a controller with an empty permitted set, b = b0 and previous
// pressure Green. Zero fields of cfg take their defaults; New panics if the
// result is invalid, so callers with user-supplied values call Validate first.
func New(cfg Config) *Controller {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	return &Controller{cfg: cfg, entries: make(map[string]*entry), budget: newBudget(cfg.B0)}
}

// Config returns the effective configuration.
func (c *Controller) Config() Config { return c.cfg }

// SetHeldBudget sets Config.HeldBudget: its owner arms or disarms the
// domain's OOM hold.
func (c *Controller) SetHeldBudget(held bool) { c.cfg.HeldBudget = held }

// B returns the current yellow concurrency budget.
func (c *Controller) B() int { return c.budget.b }

// Step runs one control iteration at time now on the snapshot obs and
// returns the complete decision. It follows Appendix B: (1) remove completed
// and register new sandboxes, (2) collect observations, (3) update estimates
// on valid intervals, (4) demands and pressure, (5) update b, (6) select the
// permitted set, (7) publish and update denial timers.
func (c *Controller) Step(now time.Time, obs Observation) Decision {
	d := Decision{Time: now, Available: obs.Available}

	// (1) Remove completed sandboxes and register newly observed ones.
	c.membership(now, obs, &d)

	// (2) and (3) Collect observations; update estimates on valid intervals.
	// An allowed sandbox that used no CPU rests, unless memory alone is
	// red: near the budget it may be waiting for memory (see
	// Config.NoRestDecay).
	band := c.cfg.ResidentBand
	th := c.cfg.ThresholdsFor(obs.Budget)
	rest := !c.cfg.NoRestDecay && obs.Available >= th.Red
	for _, e := range c.live {
		e.progressed = e.est.hasBase && e.cpu > e.est.baseCPU
		if e.est.observe(now, e.foot, e.cpu, c.cfg.Alpha, !c.cfg.NoFastAttack, rest && e.allowed) {
			e.state = e.est.label(band)
			if e.state == Growing && e.timerSet {
				e.state = PausedGrowing // still denied: keep the paused label
			}
		}
		// The growth episode: it begins where the sandbox last looked
		// resident or cooling and keeps its lowest footprint since.
		if e.state == Resident || e.state == Cooling || e.foot < e.growBase {
			e.growBase = e.foot
		}
		e.grown = e.foot - e.growBase
	}

	// (4) Projected demands, headroom and pressure.
	var rPrev, rAll int64
	for _, e := range c.live {
		e.demand = e.est.demand(c.cfg.Horizon, c.cfg.BootstrapDemand)
		if e.state == Resident && !c.cfg.NoResidentZero {
			e.demand = 0 // growth within the band is no growth (see Config.NoResidentZero)
		}
		if e.demandCap >= 0 {
			e.demand = min(e.demand, e.demandCap)
		}
		if e.inPrev {
			rPrev = satAdd(rPrev, e.demand)
		}
		rAll = satAdd(rAll, e.demand)
	}
	d.RPrev = rPrev
	d.Headroom = max(obs.Available-c.cfg.SafetyMargin, 0)
	prevP, prevB := c.budget.prev, c.budget.b
	d.Pressure = th.Classify(obs.Available, rPrev)
	// Green check (an extension of Algorithm 1): green permits every live
	// sandbox, so it is only safe when all of their demand fits. Q(t) reads
	// the previously permitted set's demand; right after the gate denied
	// every grower that set is empty, Q(t) reads green and the next
	// iteration releases them all at once, to be denied again a period
	// later (a stampede that ratchets memory up by one period of growth of
	// every sandbox each cycle). When the whole live set's projection is
	// not green, the iteration runs as yellow: b growers within H.
	if d.Pressure == Green && !c.cfg.NoGreenCheck && th.Classify(obs.Available, rAll) != Green {
		d.Pressure = Yellow
	}
	if d.Pressure != prevP {
		d.Events = append(d.Events, Event{Time: now, Kind: EventPressure, From: prevP.String(), To: d.Pressure.String()})
	}

	// (5) Update b and the Green stability timer.
	d.B = c.budget.update(now, d.Pressure, c.cfg.BMax, c.cfg.StableInterval)
	if d.B != prevB {
		d.Events = append(d.Events, Event{Time: now, Kind: EventBudget, From: strconv.Itoa(prevB), To: strconv.Itoa(d.B)})
	}

	// (6) Select the complete permitted set (marks e.inPrev as A).
	c.selectPermitted(now, d.Pressure, d.B, d.Headroom, obs.Available, th.Red, prevP == Green)

	// (7) Publish, update denial timers and labels.
	c.publish(now, &d)
	for i := range d.Events {
		d.Events[i].Pressure, d.Events[i].B = d.Pressure, d.B
	}
	return d
}

// membership is step 1. It leaves c.live sorted by ID with each entry's sample set.
func (c *Controller) membership(now time.Time, obs Observation, d *Decision) {
	c.gen++
	s := obs.Sandboxes
	c.order = c.order[:0]
	for i := range s {
		c.order = append(c.order, i)
	}
	byID := func(a, b int) int { return cmp.Compare(s[a].ID, s[b].ID) }
	if !slices.IsSortedFunc(c.order, byID) {
		slices.SortStableFunc(c.order, byID)
	}
	c.live = c.live[:0]
	for k, i := range c.order {
		smp := &s[i]
		if k > 0 && s[c.order[k-1]].ID == smp.ID {
			continue // duplicate ID in one snapshot: the first wins
		}
		e, ok := c.entries[smp.ID]
		if smp.Done {
			if ok {
				delete(c.entries, smp.ID)
				d.Events = append(d.Events, Event{Time: now, Kind: EventRemoved, Sandbox: smp.ID})
			}
			continue
		}
		if !ok {
			e = &entry{id: smp.ID, state: Growing, growBase: smp.Footprint}
			c.entries[smp.ID] = e
			d.Events = append(d.Events, Event{Time: now, Kind: EventRegistered, Sandbox: smp.ID})
		}
		e.seen, e.foot, e.cpu = c.gen, smp.Footprint, smp.CPU
		e.demandCap = -1
		if smp.HasCap {
			e.demandCap = max(smp.DemandCap, 0)
		}
		c.live = append(c.live, e)
	}
	if len(c.entries) == len(c.live) {
		return
	}
	var gone []string
	for id, e := range c.entries {
		if e.seen != c.gen {
			gone = append(gone, id)
		}
	}
	slices.Sort(gone)
	for _, id := range gone {
		delete(c.entries, id)
		d.Events = append(d.Events, Event{Time: now, Kind: EventRemoved, Sandbox: id})
	}
}

// publish is step 7: it records A as the published permissions, clears
// timers of allowed sandboxes, starts unset timers of denied ones at now,
// and relabels denied Growing sandboxes PausedGrowing. An allowed
// PausedGrowing sandbox is labelled Growing again (see doc.go).
func (c *Controller) publish(now time.Time, d *Decision) {
	d.Sandboxes = make([]SandboxDecision, 0, len(c.live))
	ids := make([]string, len(c.live))
	nPermitted := 0
	for _, e := range c.live {
		if e.inPrev {
			nPermitted++
		}
	}
	d.Permitted, d.Denied = ids[:0:nPermitted], ids[nPermitted:nPermitted]
	for _, e := range c.live {
		allowed := e.inPrev
		changed := allowed != e.allowed // initially deny
		e.allowed = allowed
		e.est.permFlip = changed
		if allowed {
			e.timerSet, e.deniedSince = false, time.Time{}
			if changed {
				e.allowedAt = now
			}
			if e.state == PausedGrowing {
				e.state = Growing
			}
			d.Permitted = append(d.Permitted, e.id)
			if changed {
				d.Events = append(d.Events, Event{Time: now, Kind: EventAllow, Sandbox: e.id, From: "deny", To: "allow"})
			}
		} else {
			if !e.timerSet {
				// A denial episode begins: on an allow→deny change, or on the
				// first decision of a new sandbox (whose permission was deny).
				e.timerSet, e.deniedSince = true, now
				from := "allow"
				if !changed {
					from = "new"
				}
				d.Events = append(d.Events, Event{Time: now, Kind: EventDeny, Sandbox: e.id, From: from, To: "deny"})
			}
			d.Denied = append(d.Denied, e.id)
			if e.state == Growing {
				e.state = PausedGrowing
				d.Events = append(d.Events, Event{Time: now, Kind: EventPause, Sandbox: e.id,
					From: Growing.String(), To: PausedGrowing.String()})
			}
		}
		sd := SandboxDecision{
			ID: e.id, State: e.state, Rate: e.est.rate, Estimated: e.est.valid, Demand: e.demand,
			Allowed: allowed, Changed: changed,
		}
		if e.timerSet {
			sd.DeniedSince = e.deniedSince
			sd.Overdue = now.Sub(e.deniedSince) >= c.cfg.DMax
		}
		d.Sandboxes = append(d.Sandboxes, sd)
	}
}

// satAdd adds two non-negative byte counts without overflowing.
func satAdd(a, b int64) int64 {
	if s := a + b; s >= a {
		return s
	}
	return 1<<63 - 1
}
