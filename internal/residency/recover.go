package residency

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tenon-dev/tenon/internal/archive"
	"github.com/tenon-dev/tenon/internal/store"
)

// RecoverReport says what Recover found.
type RecoverReport struct {
	Resident  []string // agents whose registered sandbox is alive
	Absent    []string // agents to rebuild on demand from their record
	Lost      []string // agents with neither a live sandbox nor a record (removed; restart their workflow)
	Destroyed []string // leftover sandboxes not in the registry, destroyed
}

// Recover rebuilds the manager's view from the store after a restart:
// registered agents whose sandbox is alive stay resident (not reclaimable
// until their next boundary), those with a committed record but no live
// sandbox are absent, those with neither are removed and reported lost;
// live sandboxes no registry entry claims are destroyed; staging
// directories and temporary capture files are deleted.
func (m *Manager) Recover(ctx context.Context) (RecoverReport, error) {
	var rep RecoverReport
	entries, err := m.st.ListAgents()
	if err != nil {
		return rep, fmt.Errorf("recovering: %w", err)
	}
	ids, err := m.host.List(ctx)
	if err != nil {
		return rep, fmt.Errorf("recovering: listing sandboxes: %w", err)
	}
	live := map[string]bool{}
	for _, id := range ids {
		live[id] = true
	}
	keep := map[string]bool{}
	for _, e := range entries {
		a := &agent{info: AgentInfo{ID: e.ID, WorkflowID: e.WorkflowID, Attempt: e.Attempt, NextAction: e.NextAction}, generation: e.Generation}
		rec, rerr := m.st.LatestRecord(e.ID)
		if rerr == nil {
			a.generation = max(a.generation, rec.Generation)
			a.info.BaseImage, a.info.Runtime = rec.BaseImage, rec.Runtime
		} else if !errors.Is(rerr, store.ErrNotFound) {
			return rep, fmt.Errorf("recovering %s: %w", e.ID, rerr)
		}
		switch {
		case e.State == store.StateResident && e.SandboxID != "" && live[e.SandboxID]:
			a.state = stateResident
			m.setSandbox(a, e.SandboxID)
			keep[e.SandboxID] = true
			rep.Resident = append(rep.Resident, e.ID)
		case rerr == nil:
			a.state = stateAbsent
			if e.State != store.StateAbsent || e.SandboxID != "" {
				if err := m.putAgent(a); err != nil {
					return rep, fmt.Errorf("recovering %s: %w", e.ID, err)
				}
			}
			rep.Absent = append(rep.Absent, e.ID)
		default:
			if _, err := m.st.DeleteAgent(e.ID); err != nil {
				return rep, fmt.Errorf("recovering %s: %w", e.ID, err)
			}
			rep.Lost = append(rep.Lost, e.ID)
			m.emit(Event{Kind: EventAgentLost, Agent: e.ID, Sandbox: e.SandboxID, Reason: "no live sandbox and no recovery record"})
			continue
		}
		m.mu.Lock()
		m.agents[e.ID] = a
		m.mu.Unlock()
		m.emit(Event{Kind: EventRecovered, Agent: e.ID, Sandbox: a.sandbox, Generation: a.generation})
	}
	for _, id := range ids {
		if keep[id] {
			continue
		}
		if err := m.host.Destroy(ctx, id); err != nil {
			return rep, fmt.Errorf("recovering: destroying leftover sandbox %s: %w", id, err)
		}
		rep.Destroyed = append(rep.Destroyed, id)
		m.emit(Event{Kind: EventLeftover, Sandbox: id})
	}
	if err := clearDir(m.stageDir, func(string) bool { return true }); err != nil {
		return rep, err
	}
	// Parked files of a crashed run are not trusted to be complete.
	if err := os.RemoveAll(m.parkRoot()); err != nil {
		return rep, fmt.Errorf("recovering: removing parked files: %w", err)
	}
	if err := archive.RemoveTemps(m.blobDir); err != nil {
		return rep, fmt.Errorf("recovering: %w", err)
	}
	if err := m.sweepContent(); err != nil {
		return rep, fmt.Errorf("recovering: sweeping content blobs: %w", err)
	}
	return rep, nil
}

func clearDir(dir string, match func(string) bool) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("recovering: reading %s: %w", dir, err)
	}
	for _, e := range ents {
		if match(e.Name()) {
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				return fmt.Errorf("recovering: removing %s: %w", e.Name(), err)
			}
		}
	}
	return nil
}
