package api

import (
	"io"
	"net/http"
	rtmetrics "runtime/metrics"
	"sync"
)

// Request bodies. A file upload (PUT files/...) streams to a temporary
// file in the workspace and holds only a copy buffer. The JSON bodies the
// daemon decodes in memory (create, with its files; exec; wait) are
// bounded together: a body of largeBody bytes or more takes twice its
// length (the bytes read and their decoded copy; MaxBodyBytes when the
// length is not announced) from Config.BodyMemory for as long as its
// request runs, and a request that finds too little left is answered 503
// with Retry-After at once. The daemon's own memory is reported in
// /status and /metrics (daemon_memory_bytes); tenon serve bounds it with
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

func (g *bodyGate) release(n int64) {
	g.mu.Lock()
	g.used -= n
	g.mu.Unlock()
}

// body returns r's body capped at MaxBodyBytes and a function that gives
// back its share of BodyMemory; ok is false when there is not enough left,
// and the request was answered.
func (s *Server) body(w http.ResponseWriter, r *http.Request) (body io.Reader, done func(), ok bool) {
	body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes)
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

// daemonMemory is the memory the daemon's Go runtime holds from the
// operating system (mapped and not returned), in bytes.
func daemonMemory() int64 {
	sm := []rtmetrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	rtmetrics.Read(sm)
	return int64(sm[0].Value.Uint64() - sm[1].Value.Uint64())
}
