package residency

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tenon-dev/tenon/internal/archive"
)

// Parking: after a teardown's record is committed and before its sandbox
// is destroyed, the files of the captured writable layer and workspace are
// hard-linked into StateDir/parked (archive.Park), so that the next
// rematerialization takes them over, each re-hashed against the record's
// digest, instead of creating and filling every file again. The record
// and its blobs stay the source of truth: a parked file that is missing
// or whose content no longer matches is restored from its blob. Parked
// files occupy the disk the sandbox's files occupied; they hold no memory
// beyond reclaimable page cache.

// parkRoot is the directory of every agent's parked files.
func (m *Manager) parkRoot() string { return filepath.Join(m.cfg.StateDir, "parked") }

// agentKey names an agent in file names without collisions.
func agentKey(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:12])
}

// parkDir is where artifact name of the agent's generation gen is parked.
func (m *Manager) parkDir(a *agent, gen uint64, name string) string {
	return filepath.Join(m.parkRoot(), fmt.Sprintf("%s-g%d-%s", agentKey(a.info.ID), gen, name))
}

// park parks the agent's captured artifacts (a.mu held, record of gen
// committed, sandbox not yet destroyed). Best effort: a failure only costs
// the next rematerialization time.
func (m *Manager) park(a *agent, gen uint64, dirs map[string]string) {
	if m.cfg.NoParking {
		return
	}
	for name, dir := range dirs {
		p := m.parkDir(a, gen, name)
		if _, err := archive.Park(dir, p, a.caches[name]); err != nil {
			m.log.Warn("parking files failed; the next rematerialization restores them from blobs",
				"agent", a.info.ID, "artifact", name, "err", err)
			os.RemoveAll(p)
		}
	}
}

// unpark removes the agent's parked files of every generation.
func (m *Manager) unpark(a *agent) {
	ms, _ := filepath.Glob(filepath.Join(m.parkRoot(), agentKey(a.info.ID)+"-g*"))
	for _, p := range ms {
		if err := os.RemoveAll(p); err != nil {
			m.log.Warn("removing parked files", "dir", p, "err", err)
		}
	}
}
