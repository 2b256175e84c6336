package api

import (
	"fmt"
	"io"
	"net/http"
	rtmetrics "runtime/metrics"
	"sync"
)

// Request bodies. A body that announces more than MaxBodyBytes is
// answered 413 at once, unread; one that turns out longer is cut there
// (413). A file upload (PUT files/...) streams to a temporary file in the
// workspace and holds only a copy buffer. The JSON bodies the daemon
// decodes in memory (create, with its files; exec; wait) are bounded
// together: a body of largeBody bytes or more takes twice its length (the
// bytes read and their decoded copy, decode.go; MaxBodyBytes when the
// length is not announced) from Config.BodyMemory for as long as its
// request runs, and a request that finds too little left is answered 503
// with Retry-After at once. An exec's command is kept beyond its run only
// in part (maxCommandKept, action.go). What the large bodies in flight
// hold is reported in /status and /metrics (body_memory_bytes), the
// daemon's own memory beside it (daemon_memory_bytes); tenon serve bounds it with
// the Go runtime's soft limit (--daemon-memory).

// largeBody is the body length from which a request counts against
// Config.BodyMemory.
const largeBody = 1 << 20

// bodyGate counts the memory the large bodies in flight may take.
type bodyGate struct {
	mu         sync.Mutex
	used, size int64
}

func (g *bodyGate) acquire(n int64) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.used+n > g.size {
		return false
	}
	g.used += n
	return true
}

// inUse is the memory the large bodies in flight hold.
func (g *bodyGate) inUse() int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.used
}

func (g *bodyGate) release(n int64) {
	g.mu.Lock()
	g.used -= n
	g.mu.Unlock()
}

// body returns r's body capped at MaxBodyBytes and a function that gives
// back its share of BodyMemory; ok is false when the body announces more
// than MaxBodyBytes or there is not enough BodyMemory left, and the
// request was answered.
func (s *Server) body(w http.ResponseWriter, r *http.Request) (body io.Reader, done func(), ok bool) {
	body, ok = s.cappedBody(w, r)
	if !ok {
		return nil, nil, false
	}
	n := r.ContentLength
	if n < 0 || n > s.cfg.MaxBodyBytes {
		n = s.cfg.MaxBodyBytes
	}
	if n < largeBody {
		return body, func() {}, true
	}
	if !s.bodies.acquire(2 * n) {
		w.Header().Set("Retry-After", "1")
		writeError(w, ErrBodiesBusy)
		return nil, nil, false
	}
	return body, func() { s.bodies.release(2 * n) }, true
}

// cappedBody returns r's body capped at MaxBodyBytes. A body whose
// Content-Length is already larger is refused at once (413, ok false)
// without reading it.
func (s *Server) cappedBody(w http.ResponseWriter, r *http.Request) (body io.Reader, ok bool) {
	if r.ContentLength > s.cfg.MaxBodyBytes {
		writeError(w, tooLarge(r.ContentLength, s.cfg.MaxBodyBytes))
		return nil, false
	}
	return sizedBody{http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes), r.ContentLength}, true
}

// sizedBody is a request body with its announced length (-1: unknown),
// which decode sizes its buffer from.
type sizedBody struct {
	io.Reader
	n int64
}

func (b sizedBody) Size() int64 { return b.n }

// tooLarge is the 413 error for a body of n bytes (-1: more than it was
// allowed to read) over limit.
func tooLarge(n, limit int64) error {
	if n < 0 {
		return fmt.Errorf("%w: larger than %d bytes", ErrTooLarge, limit)
	}
	return fmt.Errorf("%w: %d bytes is larger than %d bytes", ErrTooLarge, n, limit)
}

// daemonMemory is the memory the daemon's Go runtime holds from the
// operating system (mapped and not returned), in bytes.
func daemonMemory() int64 {
	sm := []rtmetrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	rtmetrics.Read(sm)
	return int64(sm[0].Value.Uint64() - sm[1].Value.Uint64())
}
