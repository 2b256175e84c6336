package residency

import (
	"errors"
	"io/fs"
	"os"

	"github.com/tenon-dev/tenon/internal/archive"
	"github.com/tenon-dev/tenon/internal/store"
)

// collect removes the blobs of deleted records that no remaining record
// references. Blobs are content-addressed and may be shared.
func (m *Manager) collect(recs []store.Record) {
	if len(recs) == 0 {
		return
	}
	m.gcMu.Lock()
	defer m.gcMu.Unlock()
	refs, err := m.st.ReferencedDigests()
	if err != nil {
		m.log.Warn("blob collection skipped", "err", err)
		return
	}
	for _, r := range recs {
		for _, art := range r.Artifacts {
			if refs[art.Ref.Digest] {
				continue
			}
			p, err := archive.BlobPath(m.blobDir, art.Ref.Digest)
			if err != nil {
				continue
			}
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				m.log.Warn("removing blob", "blob", p, "err", err)
			}
		}
	}
}
