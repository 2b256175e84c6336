package residency

import "sync"

// kicker hands Tick to the tick loop: an action boundary or the start of
// a model wait asks for the policy to run at once, but does not run it on
// the agent's path. Run live, a synchronous Tick (every idle sandbox's
// candidacy, the compression ratio, the decision) sat between an action's
// end and its agent's next model wait.
type kicker struct {
	ch      chan struct{} // capacity 1: one pending kick stands for many
	mu      sync.Mutex
	cond    *sync.Cond
	asked   uint64 // kicks made
	handled uint64 // kicks a finished Tick began after
	closed  bool
}

func newKicker() *kicker {
	k := &kicker{ch: make(chan struct{}, 1)}
	k.cond = sync.NewCond(&k.mu)
	return k
}

// kick asks the loop for a Tick.
func (k *kicker) kick() {
	k.mu.Lock()
	k.asked++
	k.mu.Unlock()
	select {
	case k.ch <- struct{}{}:
	default:
	}
}

// begin is called by the loop before its Tick; the kicks made so far are
// handled once end(begin()) is called after it.
func (k *kicker) begin() uint64 {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.asked
}

func (k *kicker) end(g uint64) {
	k.mu.Lock()
	k.handled = max(k.handled, g)
	k.cond.Broadcast()
	k.mu.Unlock()
}

// close releases every waiter: the loop has stopped.
func (k *kicker) close() {
	k.mu.Lock()
	k.closed = true
	k.cond.Broadcast()
	k.mu.Unlock()
}

// wait blocks until every kick made before it was handled, or the loop
// stopped.
func (k *kicker) wait() {
	k.mu.Lock()
	defer k.mu.Unlock()
	g := k.asked
	for k.handled < g && !k.closed {
		k.cond.Wait()
	}
}

// inflight counts running background work. Unlike a sync.WaitGroup it may
// be waited on while new work starts (Wait from one goroutine while the
// tick loop starts a teardown), which a WaitGroup forbids once its count
// reached zero.
type inflight struct {
	mu   sync.Mutex
	cond *sync.Cond
	n    int
}

func (f *inflight) Add(d int) {
	f.mu.Lock()
	f.n += d
	if f.n < 0 {
		f.mu.Unlock()
		panic("residency: negative inflight count")
	}
	if f.n == 0 && f.cond != nil {
		f.cond.Broadcast()
	}
	f.mu.Unlock()
}

func (f *inflight) Done() { f.Add(-1) }

// Wait blocks until no background work runs.
func (f *inflight) Wait() {
	f.mu.Lock()
	if f.cond == nil {
		f.cond = sync.NewCond(&f.mu)
	}
	for f.n > 0 {
		f.cond.Wait()
	}
	f.mu.Unlock()
}
