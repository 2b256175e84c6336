package replay

import (
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"github.com/tenon-dev/tenon/internal/clock"
	"github.com/tenon-dev/tenon/internal/controller"
)

// recorder stamps events with the run time and domain memory, writes them
// as JSONL and keeps the counters the Result needs.
type recorder struct {
	clock  clock.Clock
	start  time.Time
	domain controller.Domain
	policy string
	log    *slog.Logger

	mu      sync.Mutex
	enc     *json.Encoder // nil when there is no event log
	werr    error         // first write error; later writes are skipped
	peak    int64
	running int
	agents  int
	res     ResidencyStats
}

func newRecorder(c Config, start time.Time) *recorder {
	r := &recorder{clock: c.Clock, start: start, domain: c.Domain, policy: c.Policy.Name(), log: c.Logger}
	if c.EventLog != nil {
		r.enc = json.NewEncoder(c.EventLog)
	}
	return r
}

// since is the run time of t.
func (r *recorder) since(t time.Time) time.Duration { return t.Sub(r.start) }

// usage reads the domain memory; 0 when unknown.
func (r *recorder) usage() int64 {
	if r.domain == nil {
		return 0
	}
	u, err := r.domain.Usage()
	if err != nil {
		r.log.Debug("reading domain usage", "err", err)
		return 0
	}
	return u
}

// emit records e, stamping T, Policy and MemBytes when unset. It is safe for
// concurrent use and is what policies get as Env.Emit.
func (r *recorder) emit(e controller.Event) {
	if e.Policy == "" {
		e.Policy = r.policy
	}
	if e.MemBytes == 0 {
		e.MemBytes = r.usage()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if e.T == 0 { // stamped under the lock so the log is in time order
		e.T = r.since(r.clock.Now()).Seconds()
	}
	r.peak = max(r.peak, e.MemBytes)
	r.res.Add(e)
	if r.enc == nil || r.werr != nil {
		return
	}
	if err := r.enc.Encode(e); err != nil {
		r.werr = err
		r.log.Warn("writing event log; further events are dropped", "err", err)
	}
}

// actionRunning and addAgents move the concurrency gauges: an action
// began (on) or ended, agents began or ended attempts.
func (r *recorder) actionRunning(on bool) {
	r.mu.Lock()
	if on {
		r.running++
	} else {
		r.running--
	}
	r.mu.Unlock()
}

func (r *recorder) addAgents(d int) {
	r.mu.Lock()
	r.agents += d
	r.mu.Unlock()
}

func (r *recorder) gauges() (running, agents int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.running, r.agents
}

func (r *recorder) residency() ResidencyStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.res
}

func (r *recorder) peakBytes() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.peak
}

// err is the first event log write error.
func (r *recorder) err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.werr
}
