package archive

import (
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// sealMargin covers the kernel's coarse file-time clock, which may lag the
// real-time clock by up to a scheduler tick (10 ms at HZ=100).
const sealMargin = 20 * time.Millisecond

// fileID identifies a file's content as last seen: a file whose inode,
// size, mtime and ctime are all unchanged was not written since (any write,
// truncate, chmod or utimes moves ctime to the current time).
type fileID struct {
	Dev, Ino     uint64
	Size         int64
	MTime, CTime int64 // unix nanoseconds
}

func fileIDOf(st *unix.Stat_t) fileID {
	return fileID{
		Dev: uint64(st.Dev), Ino: st.Ino, Size: st.Size,
		MTime: st.Mtim.Nano(), CTime: st.Ctim.Nano(),
	}
}

// StatCache maps the relative paths of a captured or extracted tree to the
// identity and content digest their files had, so that the next CaptureTree
// of the same directory reads only files changed since. It is an
// optimization: a missing or stale entry only costs a re-read. Safe for
// concurrent use.
type StatCache struct {
	mu sync.Mutex
	m  map[string]cached
}

type cached struct {
	id     fileID
	digest string // hex
	loc    blobLoc
}

// blobLoc is where a content is stored: its own blob (pack "") or a pack.
type blobLoc struct {
	pack string // hex digest of the pack blob
	off  int64
}

// NewStatCache returns an empty cache.
func NewStatCache() *StatCache { return &StatCache{m: map[string]cached{}} }

// Len returns the number of entries.
func (c *StatCache) Len() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

func (c *StatCache) put(name string, id fileID, digest string, loc blobLoc) {
	c.mu.Lock()
	c.m[name] = cached{id, digest, loc}
	c.mu.Unlock()
}

// lookup returns the digest and location recorded for name if its
// identity still matches.
func (c *StatCache) lookup(name string, id fileID) (string, blobLoc, bool) {
	if c == nil {
		return "", blobLoc{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[name]
	if !ok || e.id != id {
		return "", blobLoc{}, false
	}
	return e.digest, e.loc, true
}

// Seal drops the entries whose ctime is within the kernel's timestamp
// granularity of now, the real time before which nothing could modify the
// tree (for an extracted tree: before the sandbox using it starts). A later
// write then always moves ctime past the recorded one. now must come from
// the real-time clock, never a test clock: it is compared with file times.
func (c *StatCache) Seal(now time.Time) {
	if c == nil {
		return
	}
	limit := now.Add(-sealMargin).UnixNano()
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, e := range c.m {
		if e.id.CTime >= limit {
			delete(c.m, k)
		}
	}
}
