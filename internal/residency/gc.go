package residency

import (
	"github.com/tenon-dev/tenon/internal/archive"
	"github.com/tenon-dev/tenon/internal/store"
)

// contentRefs counts, for every content blob, the live tree manifests
// naming it. It follows the store's set of referenced digests by
// difference, reading only manifests it has not seen. Guarded by gcMu.
type contentRefs struct {
	live  map[string][]string // manifest digest → its content digests
	count map[string]int      // content digest → live manifests naming it
}

// collect removes the blobs of deleted records that no remaining record
// references, and the content blobs no remaining manifest names. Blobs are
// content-addressed and may be shared.
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
	var orphans []string // contents of dead manifests never counted
	for _, r := range recs {
		for _, art := range r.Artifacts {
			d := art.Ref.Digest
			if refs[d] {
				continue
			}
			if _, counted := m.content.live[d]; !counted {
				cs, err := archive.ContentDigests(m.blobDir, d)
				if err != nil {
					m.log.Warn("reading manifest for collection", "blob", d, "err", err)
				}
				orphans = append(orphans, cs...)
			}
			if err := archive.RemoveBlob(m.blobDir, d); err != nil {
				m.log.Warn("removing blob", "blob", d, "err", err)
			}
		}
	}
	m.syncContent(refs, orphans)
}

// syncContent brings the counts to the manifests in refs and removes the
// content blobs no live manifest names (among those it stopped counting
// and the extra candidates). gcMu held.
func (m *Manager) syncContent(refs map[string]bool, candidates []string) {
	c := &m.content
	if c.live == nil {
		c.live, c.count = map[string][]string{}, map[string]int{}
	}
	for d := range refs { // increments first: a shared content never drops to 0 in between
		if _, ok := c.live[d]; ok {
			continue
		}
		cs, err := archive.ContentDigests(m.blobDir, d)
		if err != nil {
			// Keep what it names safe by never counting it down; log.
			m.log.Warn("reading manifest for collection", "blob", d, "err", err)
		}
		c.live[d] = cs
		for _, h := range cs {
			c.count[h]++
		}
	}
	for d, cs := range c.live {
		if refs[d] {
			continue
		}
		delete(c.live, d)
		for _, h := range cs {
			if c.count[h]--; c.count[h] <= 0 {
				delete(c.count, h)
				candidates = append(candidates, h)
			}
		}
	}
	for _, h := range candidates {
		if c.count[h] > 0 {
			continue
		}
		if err := archive.RemoveContent(m.blobDir, h); err != nil {
			m.log.Warn("removing content blob", "blob", h, "err", err)
		}
	}
}

// sweepContent removes every content blob no live manifest names (left by
// a crash between publishing content and committing its record).
func (m *Manager) sweepContent() error {
	m.gcMu.Lock()
	defer m.gcMu.Unlock()
	refs, err := m.st.ReferencedDigests()
	if err != nil {
		return err
	}
	all, err := archive.ListContent(m.blobDir)
	if err != nil {
		return err
	}
	m.syncContent(refs, all)
	return nil
}
