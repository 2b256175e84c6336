package residency

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// DefaultCompressionRatio is what a page-out's compressed copy is assumed
// to cost per byte paged out until the host reports its own ratio (zram
// with lz4 or zstd stores typical anonymous memory in a third or less).
const DefaultCompressionRatio = 1.0 / 3

// DefaultPageInRate is the page-in rate assumed until one is measured:
// 500 MiB/s (zram, lz4, on a busy 2-core machine: internal/anchor/pageout).
const DefaultPageInRate = 500 << 20

// minRateSample is the least a page-in must bring back to be timed for
// the rate: smaller ones measure the fixed cost, not the rate.
const minRateSample = 1 << 20

// compressionRatio is the host's compressed-copy cost per byte, or
// DefaultCompressionRatio.
func (m *Manager) compressionRatio() float64 {
	if m.pager == nil {
		return DefaultCompressionRatio
	}
	if r, ok := m.pager.CompressionRatio(); ok && r > 0 && r <= 1 {
		return r
	}
	return DefaultCompressionRatio
}

// pageFrees is what paging out a working set of ws bytes frees: ws less
// its compressed copy, which the host holds in memory too.
func pageFrees(ws int64, ratio float64) int64 {
	return max(ws-int64(float64(ws)*ratio), 0)
}

// pageInCost is the expected time to page ws bytes back in at the
// measured (EWMA) rate.
func (m *Manager) pageInCost(ws int64) time.Duration {
	return time.Duration(float64(m.pageInPerMiB.get()) * float64(ws) / (1 << 20))
}

// pageOutLocked freezes the agent's idle sandbox and pages it out (a.mu
// and a paging slot held). On failure it pages the sandbox back in, so
// it is never left frozen, and it stays resident as before.
func (m *Manager) pageOutLocked(ctx context.Context, a *agent) error {
	switch {
	case m.pager == nil:
		return fmt.Errorf("%w: the host cannot page out", ErrNoPageOut)
	case a.state != stateResident:
		return fmt.Errorf("%w: %s", ErrNotResident, a.info.ID)
	case a.busy && m.stalledFor(a, m.cfg.Clock.Now()) == 0:
		return fmt.Errorf("%w: %s", ErrBusy, a.info.ID)
	case a.pagedOut:
		return nil
	}
	st, err := m.pager.PageOut(ctx, a.sandbox)
	if err != nil {
		m.metrics.update(func(x *Metrics) { x.PageFailures++ })
		m.emit(Event{Kind: EventPageOutFailed, Agent: a.info.ID, Sandbox: a.sandbox, Duration: st.Duration, Err: err})
		m.log.Info("page-out failed; sandbox stays resident", "agent", a.info.ID, "sandbox", a.sandbox, "err", err)
		if _, ierr := m.pager.PageIn(context.WithoutCancel(ctx), a.sandbox); ierr != nil {
			m.log.Warn("thawing after a failed page-out", "agent", a.info.ID, "sandbox", a.sandbox, "err", ierr)
			a.pagedOut = true // Ensure retries the page-in before the next action
		}
		return err
	}
	a.pagedOut = true
	defer func() {
		if a.busy && m.stalledFor(a, m.cfg.Clock.Now()) == 0 {
			// The gate let the sandbox run while it was being paged out
			// (UnstallSandbox could not take a.mu and the sandbox was
			// resumed): nothing else would bring it back before its
			// action's timeout, so back in now.
			if err := m.pageInLocked(ctx, a, false, false); err != nil {
				m.log.Warn("paging back in a sandbox the gate let run during its page-out", "agent", a.info.ID, "sandbox", a.sandbox, "err", err)
			}
		}
	}()
	freed := max(st.MemoryBefore-st.MemoryAfter, 0)
	m.metrics.update(func(x *Metrics) {
		x.PageOuts++
		x.BytesPagedOut += st.Bytes
		x.MemoryPagedOut += freed
	})
	m.emit(Event{Kind: EventPageOut, Agent: a.info.ID, Sandbox: a.sandbox, Bytes: st.Bytes, Freed: freed,
		WorkingSet: a.workingSet, Duration: st.Duration})
	return nil
}

// pageInLocked faults a paged-out sandbox back in and thaws it (a.mu and
// a paging slot held). On failure the agent stays paged out, so the
// next Ensure tries again. With whole and a WholePager host the sandbox
// is thawed only when all of its memory came back, else left frozen.
func (m *Manager) pageInLocked(ctx context.Context, a *agent, predictive, whole bool) error {
	if !a.pagedOut || a.state != stateResident {
		return nil
	}
	pageIn := m.pager.PageIn
	if wp, ok := m.pager.(WholePager); ok && whole {
		pageIn = wp.PageInWhole
	}
	st, err := pageIn(ctx, a.sandbox)
	if errors.Is(err, ErrPageInIncomplete) {
		m.metrics.update(func(x *Metrics) { x.ThawDeferrals++ })
		if !a.thawDeferred {
			a.thawDeferred = true
			m.emit(Event{Kind: EventThawDeferred, Agent: a.info.ID, Sandbox: a.sandbox, Duration: st.Duration, Err: err})
		}
		a.thawBackoff = min(max(2*a.thawBackoff, thawBackoffMin), thawBackoffMax)
		a.thawRetry = m.cfg.Clock.Now().Add(a.thawBackoff)
		return fmt.Errorf("%w: %s: %w", ErrPageInFailed, a.info.ID, err)
	}
	if err != nil {
		m.metrics.update(func(x *Metrics) { x.PageFailures++ })
		m.emit(Event{Kind: EventPageInFailed, Agent: a.info.ID, Sandbox: a.sandbox, Duration: st.Duration, Err: err})
		return fmt.Errorf("%w: %s: %w", ErrPageInFailed, a.info.ID, err)
	}
	a.pagedOut, a.thawDeferred, a.thawRetry, a.thawBackoff = false, false, time.Time{}, 0
	if st.Bytes >= minRateSample && st.Duration > 0 {
		m.pageInPerMiB.observe(time.Duration(float64(st.Duration) * (1 << 20) / float64(st.Bytes)))
	}
	m.metrics.update(func(x *Metrics) { x.PageIns++; x.BytesPagedIn += st.Bytes })
	reason := "demand"
	if predictive {
		reason = "prefetch"
	}
	m.emit(Event{Kind: EventPageIn, Agent: a.info.ID, Sandbox: a.sandbox, Bytes: st.Bytes, Duration: st.Duration, Reason: reason})
	return nil
}
