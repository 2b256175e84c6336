package managed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/tenon-dev/tenon/internal/fsutil"
	"github.com/tenon-dev/tenon/internal/sandbox"
)

// meta is what the host remembers of a live sandbox on disk, so that a
// sandbox lost in a crash can be revived under the same id.
type meta struct {
	Agent string       `json:"agent"`
	Spec  sandbox.Spec `json:"spec"`
}

func (h *Host) metaPath(id string) string { return filepath.Join(h.cfg.Dir, "meta", id+".json") }

// writeMeta records a sandbox's spec atomically (fsutil.WriteFile): a crash
// leaves the old record or the new one, never a torn one.
func (h *Host) writeMeta(m meta) error {
	if err := fsutil.WriteFile(h.metaPath(m.Spec.ID), 0o600, func(w io.Writer) error {
		return json.NewEncoder(w).Encode(m)
	}); err != nil {
		return fmt.Errorf("writing sandbox meta: %w", err)
	}
	return nil
}

func (h *Host) removeMeta(id string) {
	if err := os.Remove(h.metaPath(id)); err != nil && !errors.Is(err, os.ErrNotExist) {
		h.cfg.Logger.Warn("removing sandbox meta", "sandbox", id, "err", err)
	}
}

// Revive rebuilds, under their old ids, the sandboxes an earlier process
// made and lost in a crash, for those ids want accepts and whose writable
// layer was salvaged into salvageDir/<id> (process.Config.SalvageDir). Each
// gets its old workspace (still on disk) and salvaged layer; its processes
// are gone. Everything else the earlier process left (metas, salvaged
// layers, host-owned workspaces no revived sandbox uses) is removed. It
// returns the revived ids. Call it before residency's Recover, which then
// finds them live.
func (h *Host) Revive(ctx context.Context, salvageDir string, want func(id string) bool) ([]string, error) {
	ents, err := os.ReadDir(filepath.Join(h.cfg.Dir, "meta"))
	if err != nil {
		return nil, fmt.Errorf("reviving: %w", err)
	}
	var metas []meta
	for _, e := range ents {
		p := filepath.Join(h.cfg.Dir, "meta", e.Name())
		var m meta
		b, err := os.ReadFile(p)
		if err == nil {
			err = json.Unmarshal(b, &m)
		}
		if err != nil || !strings.HasSuffix(e.Name(), ".json") || m.Spec.ID+".json" != e.Name() {
			h.cfg.Logger.Warn("dropping unreadable sandbox meta", "file", p, "err", err)
			_ = os.Remove(p)
			continue
		}
		metas = append(metas, m)
	}
	var revived []string
	inUse := map[string]bool{}
	for _, m := range metas {
		layer := filepath.Join(salvageDir, m.Spec.ID)
		if _, err := os.Stat(layer); salvageDir == "" || err != nil || !want(m.Spec.ID) {
			continue
		}
		s := m.Spec
		s.RootfsFrom = layer
		info, err := h.cfg.Backend.Create(ctx, s)
		if err != nil {
			h.cfg.Logger.Warn("reviving a sandbox", "sandbox", s.ID, "agent", m.Agent, "err", err)
			continue
		}
		h.mu.Lock()
		h.live[s.ID] = m
		h.mu.Unlock()
		inUse[s.Workspace] = true
		revived = append(revived, s.ID)
		if h.cfg.Up != nil {
			h.cfg.Up(m.Agent, info)
		}
		h.cfg.Logger.Info("revived a sandbox lost in a crash", "sandbox", s.ID, "agent", m.Agent)
	}
	live := map[string]bool{}
	for _, id := range revived {
		live[id] = true
	}
	for _, m := range metas {
		if live[m.Spec.ID] {
			continue
		}
		if ws := m.Spec.Workspace; !inUse[ws] && ws == h.workspaceDir(m.Spec.ID) {
			_ = os.RemoveAll(ws)
		}
		h.removeMeta(m.Spec.ID)
	}
	if salvageDir != "" {
		if err := os.RemoveAll(salvageDir); err != nil {
			return revived, fmt.Errorf("reviving: removing %s: %w", salvageDir, err)
		}
	}
	return revived, nil
}
