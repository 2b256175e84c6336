package residency

import (
	"context"
	"fmt"
	"time"

	"github.com/tenon-dev/tenon/internal/archive"
	"github.com/tenon-dev/tenon/internal/store"
)

// Teardown dematerializes the agent's idle sandbox now, following the
// protocol of Appendix D.2: block dispatch (the agent lock), validate,
// capture, commit, destroy. It waits for a lifecycle slot. Any failure
// before the commit leaves the sandbox resident and returns an error.
func (m *Manager) Teardown(ctx context.Context, agentID string) error {
	a, err := m.lookup(agentID)
	if err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := m.lifecycle.acquire(ctx, prioReclaim); err != nil {
		return err
	}
	defer m.lifecycle.release()
	return m.teardownLocked(ctx, a)
}

// teardownLocked runs the protocol; a.mu and a lifecycle slot are held.
func (m *Manager) teardownLocked(ctx context.Context, a *agent) (err error) {
	switch {
	case a.state != stateResident:
		return fmt.Errorf("%w: %s", ErrNotResident, a.info.ID)
	case a.busy:
		return fmt.Errorf("%w: %s", ErrBusy, a.info.ID)
	case !a.haveVerdict:
		return fmt.Errorf("%w: %s: no boundary observed since the sandbox became resident", ErrResidentOnly, a.info.ID)
	case !a.verdict.Restartable:
		return fmt.Errorf("%w: %s: %s", ErrResidentOnly, a.info.ID, a.verdict.Reason)
	}
	start := m.cfg.Clock.Now()
	id := a.sandbox
	defer func() {
		if err != nil {
			d := m.cfg.Clock.Now().Sub(start)
			m.metrics.update(func(x *Metrics) { x.TeardownFailures++; x.LifecycleOverhead += d })
			m.emit(Event{Kind: EventTeardownFailed, Agent: a.info.ID, Sandbox: id, Duration: d, Err: err})
			m.log.Info("teardown aborted; sandbox stays resident", "agent", a.info.ID, "sandbox", id, "err", err)
		}
	}()

	// 1. Validate afresh: nothing may have started since the boundary.
	procs, err := m.host.Procs(ctx, id)
	if err != nil {
		return fmt.Errorf("validating %s: listing processes: %w", id, err)
	}
	if v := Check(Observation{ActionExited: true, ResultRecorded: true, Procs: procs}); !v.Restartable {
		a.verdict = v
		return fmt.Errorf("%w: %s: %s", ErrResidentOnly, a.info.ID, v.Reason)
	}
	upper, ws, err := m.host.Paths(ctx, id)
	if err != nil {
		return fmt.Errorf("locating state of %s: %w", id, err)
	}

	// 2. Capture, and 3. commit, with blob GC held off in between. A
	// workspace the host keeps is neither captured nor parked.
	dirs := map[string]string{store.ArtifactUpper: upper, store.ArtifactWorkspace: ws}
	if k, ok := m.host.(WorkspaceKeeper); ok && k.KeepsWorkspace(id) {
		delete(dirs, store.ArtifactWorkspace)
	}
	tCapture := time.Now()
	rec, got, orphans, err := m.captureAndCommit(ctx, a, dirs)
	if err != nil {
		m.collect([]store.Record{{Artifacts: orphans}}) // blobs no record references
		return err
	}
	a.generation = rec.Generation

	// 4. Only now may the sandbox go; its files stay parked for the next
	// rematerialization.
	tPark := time.Now()
	m.park(a, rec.Generation, dirs)
	tDestroy := time.Now()
	if err := m.host.Destroy(ctx, id); err != nil {
		// The record is committed, so the agent can be rebuilt from it;
		// the half-destroyed sandbox is not used again.
		m.log.Warn("destroy after commit failed; agent marked absent", "agent", a.info.ID, "sandbox", id, "err", err)
		m.emit(Event{Kind: EventDestroyFailed, Agent: a.info.ID, Sandbox: id, Err: err})
		m.mu.Lock()
		m.zombies = append(m.zombies, id)
		m.mu.Unlock()
	}
	m.log.Debug("teardown phases", "agent", a.info.ID, "capture+commit", tPark.Sub(tCapture),
		"park", tDestroy.Sub(tPark), "destroy", time.Since(tDestroy), "written", got.written)
	a.state, a.haveVerdict, a.caches, a.pagedOut, a.thawDeferred = stateAbsent, false, nil, false, false
	a.thawRetry, a.thawBackoff = time.Time{}, 0
	m.setSandbox(a, "")
	if err := m.putAgent(a); err != nil {
		// Recover treats "resident in the registry, sandbox gone, record
		// present" as absent, so this is recoverable.
		m.log.Warn("registry update after teardown failed", "agent", a.info.ID, "err", err)
	}
	if gone, err := m.st.PruneRecords(a.info.ID, rec.Generation); err == nil {
		m.collect(gone)
	}
	d := m.cfg.Clock.Now().Sub(start)
	m.tdCost.observe(d)
	ws0 := a.workingSet
	m.metrics.update(func(x *Metrics) {
		x.Teardowns++
		x.LifecycleOverhead += d
		x.BytesCaptured += got.written
		x.BytesState += got.logical
		x.MemoryReclaimed += ws0
	})
	m.emit(Event{Kind: EventTeardown, Agent: a.info.ID, Sandbox: id, Generation: rec.Generation,
		Bytes: got.written, StateBytes: got.logical, WorkingSet: ws0, Duration: d})
	return nil
}

// captured is what captureAndCommit stored.
type captured struct {
	written int64 // bytes written to the blob store
	logical int64 // payload bytes of the captured state
}

// captureAndCommit captures the artifacts (name -> directory: the writable
// layer, and the workspace unless the host keeps it) and commits the
// record. On error it also returns the artifacts it captured, for
// collection.
func (m *Manager) captureAndCommit(ctx context.Context, a *agent, dirs map[string]string) (store.Record, captured, []store.Artifact, error) {
	m.gcMu.RLock()
	defer m.gcMu.RUnlock()
	var (
		arts    []store.Artifact
		caches  = map[string]*archive.StatCache{}
		summary captured
	)
	for _, x := range []struct{ name, what string }{
		{store.ArtifactUpper, "writable layer"},
		{store.ArtifactWorkspace, "workspace"},
	} {
		dir, ok := dirs[x.name]
		if !ok {
			continue
		}
		ref, cache, err := archive.CaptureTree(ctx, dir, m.blobDir, archive.TreeOptions{
			Cache: a.caches[x.name], WrapFile: m.cfg.Capture.WrapFile,
		})
		if err != nil {
			return store.Record{}, captured{}, arts, fmt.Errorf("capturing %s of %s: %w", x.what, a.info.ID, err)
		}
		arts = append(arts, store.Artifact{Name: x.name, Ref: ref})
		caches[x.name] = cache
		summary.written += ref.Written
		summary.logical += ref.Bytes
	}
	rec := store.Record{
		WorkflowID: a.info.WorkflowID,
		AgentID:    a.info.ID,
		Generation: a.generation + 1,
		NextAction: a.info.NextAction,
		Attempt:    a.info.Attempt,
		Artifacts:  arts,
		// A workspace left out of dirs is the host's to keep.
		WorkspaceKept: dirs[store.ArtifactWorkspace] == "",
		BaseImage:     a.info.BaseImage,
		Runtime:       a.info.Runtime,
		CreatedAt:     m.cfg.Clock.Now(),
	}
	// The sandbox is unchanged since the capture; should the commit fail
	// and it stay resident, the next capture reads only what changes.
	a.caches = caches
	if err := m.st.PutRecord(rec); err != nil {
		return store.Record{}, captured{}, arts, fmt.Errorf("committing recovery record of %s: %w", a.info.ID, err)
	}
	return rec, summary, nil, nil
}
