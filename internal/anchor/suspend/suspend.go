package suspend

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/tenon-dev/tenon/internal/anchor/broker"
	"github.com/tenon-dev/tenon/internal/anchor/pageout"
	"github.com/tenon-dev/tenon/internal/cgroup"
)

// Pager pages one process out and in (pageout.Pager in production).
type Pager interface {
	PageOut(pid int) (pageout.Stats, error)
	PageIn(pid int) (pageout.Stats, error)
}

// Harness is the group a broker's decisions act on.
type Harness struct {
	Group cgroup.Group
	Pager Pager
	Log   *slog.Logger

	mu          sync.Mutex
	frozen      bool
	prefetched  bool
	suspensions int
}

// Record says what one Apply did.
type Record struct {
	Action    broker.Action
	Confirmed bool            // Suspend: the broker confirmed and the tasks were paged out
	Stats     []pageout.Stats // per task paged
	Freeze    time.Duration   // time to freeze (Suspend) or thaw (Resume)
	Total     time.Duration
}

// New returns the actuator for group g.
func New(g cgroup.Group, p Pager, log *slog.Logger) *Harness {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Harness{Group: g, Pager: p, Log: log}
}

// Suspensions is the number of confirmed suspensions so far.
func (h *Harness) Suspensions() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.suspensions
}

// Apply carries out d, which b returned.
func (h *Harness) Apply(ctx context.Context, b *broker.Broker, d broker.Decision) (rec Record, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	rec.Action = d.Action
	start := time.Now()
	defer func() { rec.Total = time.Since(start) }()
	switch d.Action {
	case broker.Suspend:
		if err := h.Group.Freeze(ctx); err != nil {
			return rec, fmt.Errorf("suspending harness: %w", err)
		}
		h.frozen = true
		rec.Freeze = time.Since(start)
		if !b.Confirm(d.Epoch) {
			// An event raced the freeze; its Resume may already be
			// waiting on the lock, but thaw now either way.
			return rec, h.thaw(ctx)
		}
		rec.Confirmed = true
		h.suspensions++
		h.prefetched = false
		stats, err := h.each(h.Pager.PageOut)
		rec.Stats = stats
		if err != nil {
			return rec, fmt.Errorf("paging harness out: %w", err)
		}
	case broker.Prefetch:
		if !h.frozen || h.prefetched {
			return rec, nil
		}
		stats, err := h.each(h.Pager.PageIn)
		rec.Stats = stats
		h.prefetched = err == nil
		if err != nil {
			return rec, fmt.Errorf("prefetching harness: %w", err)
		}
	case broker.Resume:
		var errs []error
		if h.frozen && !h.prefetched {
			stats, err := h.each(h.Pager.PageIn)
			rec.Stats = stats
			errs = append(errs, err) // thaw even when paging in failed
		}
		t := time.Now()
		errs = append(errs, h.thaw(ctx))
		rec.Freeze = time.Since(t)
		if err := errors.Join(errs...); err != nil {
			return rec, fmt.Errorf("resuming harness: %w", err)
		}
	}
	return rec, nil
}

func (h *Harness) thaw(ctx context.Context) error {
	if !h.frozen {
		return nil
	}
	if err := h.Group.Thaw(ctx); err != nil {
		return err
	}
	h.frozen, h.prefetched = false, false
	return nil
}

// each applies f to every task of the group.
func (h *Harness) each(f func(int) (pageout.Stats, error)) ([]pageout.Stats, error) {
	pids, err := h.Group.Pids()
	if err != nil {
		return nil, err
	}
	var out []pageout.Stats
	var errs []error
	for _, pid := range pids {
		st, err := f(pid)
		if err != nil {
			errs = append(errs, fmt.Errorf("pid %d: %w", pid, err))
			continue
		}
		out = append(out, st)
	}
	return out, errors.Join(errs...)
}

// DefaultPoll is how often Watch looks at a harness that is not idle.
const DefaultPoll = 50 * time.Millisecond

// Watch ticks b (which must run on the system clock) when an idle
// harness's grace runs out and applies the Suspend decisions, until ctx
// ends. Each applied suspension is passed to report (which may be nil).
func Watch(ctx context.Context, b *broker.Broker, h *Harness, poll time.Duration, report func(Record, error)) {
	if poll <= 0 {
		poll = DefaultPoll
	}
	timer := time.NewTimer(poll)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		if d := b.Tick(); d.Action == broker.Suspend {
			rec, err := h.Apply(ctx, b, d)
			if err != nil {
				h.Log.Warn("suspending harness", "err", err)
			}
			if report != nil {
				report(rec, err)
			}
		}
		wait := poll
		if dl, ok := b.Deadline(); ok {
			wait = min(poll, max(time.Until(dl), time.Millisecond))
		}
		timer.Reset(wait)
	}
}
