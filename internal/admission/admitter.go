package admission

import (
	"fmt"
	"slices"
	"sync"
	"time"
)

// Admitter holds the queues and the water level. It is safe for concurrent
// use.
type Admitter struct {
	mu        sync.Mutex
	cfg       Config
	eventTime func() time.Time // the time of the event being decided

	light, heavy []*Ticket // waiting, oldest first
	level        int64     // M_admitted: sum of admitted charges
	running      int

	credit     float64 // protected credit of owner, bytes
	owner      *Ticket // the oldest waiting heavy ticket
	lastAccrue time.Time
}

// New returns an Admitter. now is the time of the event being decided, not
// a clock: admission is a decision package and reads no clock (its owner,
// policy.Machine, passes the time it was handed with the event; tests pass
// a time they step). So it stays a func, not a clock.Clock.
func New(cfg Config, now func() time.Time) *Admitter {
	return &Admitter{cfg: cfg.withDefaults(), eventTime: now}
}

// Config returns the configuration with defaults applied.
func (a *Admitter) Config() Config { return a.cfg }

// Enqueue queues an action. It holds no charge until Schedule admits it.
func (a *Admitter) Enqueue(req Request) *Ticket {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.eventTime()
	if req.Enqueued.IsZero() {
		req.Enqueued = now
	}
	d := req.Descriptor
	t := &Ticket{a: a, req: req, ready: make(chan struct{}),
		heavy: d.HeavyRisk >= a.cfg.HeavyRisk || d.PredPeak >= a.cfg.HeavyThreshold}
	if t.heavy {
		a.accrue(now)
		a.heavy = insertByTime(a.heavy, t)
		a.setOwner(now)
	} else {
		a.light = insertByTime(a.light, t)
	}
	return t
}

func insertByTime(q []*Ticket, t *Ticket) []*Ticket {
	i := len(q)
	for i > 0 && q[i-1].req.Enqueued.After(t.req.Enqueued) {
		i--
	}
	return slices.Insert(q, i, t)
}

// Schedule admits what fits now and returns the newly admitted tickets, in
// admission order. physicalHeadroom is the observed available memory minus
// the caller's safety margin, in bytes; lightMargin is the part of that
// margin light actions may use (the light lane, see the package doc), 0 for
// none.
func (a *Admitter) Schedule(physicalHeadroom, lightMargin int64) []*Ticket {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.eventTime()
	a.accrue(now)
	phys := physicalHeadroom
	lightMargin = max(lightMargin, 0)
	var out []*Ticket
	// The logical check uses the interpolated charge (the water level); the
	// physical check uses what the action will really need at its peak.
	need := func(t *Ticket, c int64) int64 { return max(c, min(t.req.Descriptor.PredPeak, a.cfg.Budget)) }
	admit := func(t *Ticket, c int64) {
		t.state, t.charge, t.admitted = Admitted, c, now
		a.level += c
		a.running++
		phys -= need(t, c)
		close(t.ready)
		out = append(out, t)
	}
	// Light first, skipping what does not fit; the owner's credit is off limits.
	reserved := int64(a.credit)
	a.light = slices.DeleteFunc(a.light, func(t *Ticket) bool {
		c := a.chargeOf(t)
		if c <= a.cfg.Budget-a.level-reserved && need(t, c) <= phys+lightMargin {
			admit(t, c)
			return true
		}
		return false
	})
	// Heavy: the owner may use its credit; younger heavy actions may not.
	for len(a.heavy) > 0 {
		h := a.heavy[0]
		c := a.chargeOf(h)
		if c > a.cfg.Budget-a.level || need(h, c) > phys {
			break
		}
		admit(h, c)
		a.heavy = a.heavy[1:]
		a.setOwner(now)
	}
	reserved = int64(a.credit)
	if len(a.heavy) > 1 {
		rest := slices.DeleteFunc(a.heavy[1:], func(t *Ticket) bool {
			c := a.chargeOf(t)
			if c <= a.cfg.Budget-a.level-reserved && need(t, c) <= phys {
				admit(t, c)
				return true
			}
			return false
		})
		a.heavy = append(a.heavy[:1], rest...)
	}
	return out
}

// Release returns an admitted ticket's charge. It must be called exactly
// once per admitted ticket; a second call returns ErrReleased and changes
// nothing.
func (a *Admitter) Release(t *Ticket) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch t.state {
	case Admitted:
		t.state = Released
		a.level -= t.charge
		a.running--
		return nil
	case Released:
		return fmt.Errorf("releasing %s: %w", t.req.ID, ErrReleased)
	default:
		return fmt.Errorf("releasing %s (%s): %w", t.req.ID, t.state, ErrNotAdmitted)
	}
}

// Cancel withdraws a waiting ticket and reports whether it did; an admitted
// ticket is not cancelled (Release it instead).
func (a *Admitter) Cancel(t *Ticket) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.cancelLocked(t)
}

func (a *Admitter) cancelLocked(t *Ticket) bool {
	if t.state != Waiting {
		return false
	}
	t.state = Cancelled
	close(t.ready)
	del := func(x *Ticket) bool { return x == t }
	a.light = slices.DeleteFunc(a.light, del)
	a.heavy = slices.DeleteFunc(a.heavy, del)
	now := a.eventTime()
	a.accrue(now)
	a.setOwner(now)
	return true
}

// alpha is the interpolation factor at the current level.
func (a *Admitter) alpha() float64 {
	return min(max(float64(a.level)/float64(a.cfg.MWindow), 0), 1)
}

// chargeOf is the charge t would get if admitted now, within [0, Budget].
func (a *Admitter) chargeOf(t *Ticket) int64 {
	al := a.alpha()
	d := t.req.Descriptor
	c := int64((1-al)*float64(d.PredAvg) + al*float64(d.PredPeak))
	return min(max(c, 0), a.cfg.Budget)
}

// accrue adds the credit the owner earned since the last call, capped at
// the owner's largest possible charge (its peak, at most the budget), so that
// a full credit covers the owner whatever the water level is when it fits.
func (a *Admitter) accrue(now time.Time) {
	if a.owner == nil {
		a.credit = 0
		a.lastAccrue = now
		return
	}
	if dt := now.Sub(a.lastAccrue); dt > 0 {
		a.credit += a.cfg.Beta * dt.Seconds()
		a.lastAccrue = now
	}
	d := a.owner.req.Descriptor
	a.credit = min(a.credit, float64(min(max(d.PredPeak, d.PredAvg, 0), a.cfg.Budget)))
}

// setOwner makes the oldest waiting heavy ticket the credit owner; a new
// owner starts from zero credit at now.
func (a *Admitter) setOwner(now time.Time) {
	var h *Ticket
	if len(a.heavy) > 0 {
		h = a.heavy[0]
	}
	if h != a.owner {
		a.owner, a.credit, a.lastAccrue = h, 0, now
	}
}
