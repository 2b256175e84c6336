package scope

import "sync"

// DefaultOutputCap is the per-stream output kept when a Request sets none.
const DefaultOutputCap = 1 << 20

// capped keeps the first cap bytes written to it and counts the rest. It
// never fails a write, so a chatty tool is never blocked or killed by its
// output.
type capped struct {
	mu      sync.Mutex
	cap     int
	buf     []byte
	dropped int64
}

func newCapped(limit int) *capped {
	if limit <= 0 {
		limit = DefaultOutputCap
	}
	return &capped{cap: limit}
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	room := c.cap - len(c.buf)
	if room > len(p) {
		room = len(p)
	}
	if room > 0 {
		c.buf = append(c.buf, p[:room]...)
	}
	c.dropped += int64(len(p) - max(room, 0))
	return len(p), nil
}

func (c *capped) result() ([]byte, int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf, c.dropped
}
