package residency

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"github.com/tenon-dev/tenon/internal/archive"
	"github.com/tenon-dev/tenon/internal/store"
)

// rematerialize rebuilds an absent agent's sandbox from its latest record
// (a.mu and a lifecycle slot held). It retries with backoff; each try
// starts from fresh, empty staging directories.
func (m *Manager) rematerialize(ctx context.Context, a *agent) error {
	rec, err := m.st.LatestRecord(a.info.ID)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("%w: agent %s", ErrNoRecord, a.info.ID)
	}
	if err != nil {
		return fmt.Errorf("reading recovery record of %s: %w", a.info.ID, err)
	}
	var last error
	backoff := m.cfg.RematBackoff
	for try := 1; try <= m.cfg.MaxRematAttempts; try++ {
		if try > 1 {
			if err := m.sleep(ctx, backoff); err != nil {
				return err
			}
			backoff = min(2*backoff, m.cfg.RematBackoffMax)
		}
		start := m.cfg.Clock.Now()
		id, caches, err := m.rematOnce(ctx, a, rec, try)
		d := m.cfg.Clock.Now().Sub(start)
		m.metrics.update(func(x *Metrics) { x.LifecycleOverhead += d })
		if err == nil {
			m.unpark(a)
			m.rmCost.observe(d)
			a.state, a.haveVerdict, a.caches = stateResident, false, caches
			m.setSandbox(a, id)
			if err := m.putAgent(a); err != nil {
				m.log.Warn("registry update after rematerialization failed", "agent", a.info.ID, "err", err)
			}
			m.metrics.update(func(x *Metrics) { x.Rematerializations++ })
			m.emit(Event{Kind: EventRemat, Agent: a.info.ID, Sandbox: id, Generation: rec.Generation, Duration: d})
			return nil
		}
		last = err
		m.metrics.update(func(x *Metrics) { x.RematFailures++ })
		m.emit(Event{Kind: EventRematFailed, Agent: a.info.ID, Generation: rec.Generation, Duration: d, Err: err})
		m.log.Warn("rematerialization failed", "agent", a.info.ID, "try", try, "err", err)
		if ctx.Err() != nil {
			break
		}
	}
	return fmt.Errorf("%w: agent %s generation %d: %w", ErrRematFailed, a.info.ID, rec.Generation, last)
}

func (m *Manager) sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-m.bg.Done():
		return ErrClosed
	case <-m.cfg.Clock.After(d):
		return nil
	}
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9_.-]`)

// stagePaths returns this try's staging directories.
func (m *Manager) stagePaths(a *agent, gen uint64, try int) (upper, ws string) {
	base := fmt.Sprintf("%s-g%d-r%d", unsafeChars.ReplaceAllString(a.info.ID, "_"), gen, try)
	return filepath.Join(m.stageDir, base+"-upper"), filepath.Join(m.stageDir, base+"-workspace")
}

// rematOnce is one rematerialization try. Whatever it staged is deleted
// before it returns, success or not; on failure no sandbox is left. It
// returns the stat caches of the extracted artifacts.
func (m *Manager) rematOnce(ctx context.Context, a *agent, rec store.Record, try int) (string, map[string]*archive.StatCache, error) {
	upper, ws := m.stagePaths(a, rec.Generation, try)
	defer os.RemoveAll(upper)
	defer os.RemoveAll(ws)
	for _, d := range []string{upper, ws} {
		if err := os.RemoveAll(d); err != nil {
			return "", nil, fmt.Errorf("clearing staging dir %s: %w", d, err)
		}
	}
	caches := map[string]*archive.StatCache{}
	restore := []struct{ name, dir string }{{store.ArtifactUpper, upper}, {store.ArtifactWorkspace, ws}}
	if rec.WorkspaceKept {
		// The host kept the workspace in place for this sandbox.
		restore, ws = restore[:1], ""
	}
	for _, x := range restore {
		ref, ok := rec.Artifact(x.name)
		if !ok {
			return "", nil, fmt.Errorf("record %s/%d has no %s artifact", a.info.ID, rec.Generation, x.name)
		}
		var err error
		if ref.Format == archive.FormatTree {
			var st archive.ExtractStats
			caches[x.name], st, err = archive.ExtractTreeWith(ctx, m.blobDir, ref, x.dir,
				archive.ExtractOptions{Reuse: m.parkDir(a, rec.Generation, x.name)})
			m.log.Debug("restored", "agent", a.info.ID, "artifact", x.name, "files", st.Files, "reused", st.Reused)
		} else {
			err = archive.ExtractRef(ctx, m.blobDir, ref, x.dir)
		}
		if err != nil {
			return "", nil, fmt.Errorf("restoring %s of %s: %w", x.name, a.info.ID, err)
		}
	}
	// Nothing modifies the trees before the sandbox starts. Real time, not
	// Config.Clock: the caches compare it with file ctimes.
	now := time.Now()
	for _, c := range caches {
		c.Seal(now)
	}
	spec := m.spec(a, rec)
	spec.UpperFrom, spec.WorkspaceFrom = upper, ws
	id, err := m.host.Create(ctx, spec)
	if err != nil {
		return "", nil, fmt.Errorf("creating sandbox for %s: %w", a.info.ID, err)
	}
	if err := m.host.Ready(ctx, id); err != nil {
		m.destroyQuiet(id, a.info.ID)
		return "", nil, fmt.Errorf("sandbox %s of %s not ready: %w", id, a.info.ID, err)
	}
	return id, caches, nil
}
