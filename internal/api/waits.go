package api

import (
	"sync"
	"time"

	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/policy"
)

// waitLearner predicts an agent's next model wait from the waits it was
// seen in (policy.WaitModel: an exponentially weighted average per agent,
// and one over all agents for an agent not yet seen waiting). A wait is
// what the proxy or POST /wait announced (begin to end) or, between two
// actions with no announced wait, the idle gap. It has no clock: callers
// pass durations. What it learns survives restarts: the server stores the
// averages that changed in the registry every waitSaveEvery and at
// shutdown, and loads them at start (saveWaits, New).
type waitLearner struct {
	mu    sync.Mutex
	m     *policy.WaitModel
	dirty map[string]bool // averages changed since the last take (allWaitsKey: all)
}

func newWaitLearner() *waitLearner {
	return &waitLearner{m: policy.NewWaitModel(), dirty: map[string]bool{}}
}

// load starts from stored averages (allWaitsKey: the one over all agents).
func (l *waitLearner) load(stored map[string]time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for id, d := range stored {
		l.m.Set(id, id == allWaitsKey, d)
	}
}

// observe learns one wait of agent id.
func (l *waitLearner) observe(id string, d time.Duration) {
	if d <= 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.m.Observe(id, d)
	l.dirty[id], l.dirty[allWaitsKey] = true, true
}

// predict is agent id's expected next wait, 0 when no wait was seen yet.
func (l *waitLearner) predict(id string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.m.Predict(id)
}

// forget drops a deleted agent's average.
func (l *waitLearner) forget(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.m.Forget(id)
	delete(l.dirty, id)
}

// takeChanged returns the averages changed since the last call
// (allWaitsKey: the one over all agents) and marks them saved.
func (l *waitLearner) takeChanged() map[string]time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.dirty) == 0 {
		return nil
	}
	out := make(map[string]time.Duration, len(l.dirty))
	for id := range l.dirty {
		if id == allWaitsKey {
			out[id], _ = l.m.All()
		} else if d, ok := l.m.Average(id); ok {
			out[id] = d
		}
	}
	clear(l.dirty)
	return out
}

// markChanged marks averages to be saved again (a failed save).
func (l *waitLearner) markChanged(ids map[string]time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for id := range ids {
		if _, ok := l.m.Average(id); ok || id == allWaitsKey {
			l.dirty[id] = true
		}
	}
}

// waitSaveEvery is how often the learned waits that changed are stored:
// a crash loses at most this much learning, and no action or wait end
// waits for a disk write.
const waitSaveEvery = 2 * time.Second

// saveWaits stores the learned waits that changed since the last save.
func (s *Server) saveWaits() {
	ch := s.waits.takeChanged()
	if err := s.reg.putWaits(ch); err != nil {
		s.waits.markChanged(ch)
		s.log.Warn("storing learned model waits", "err", err)
	}
}

// waitAware is the optional capability of the sandbox manager (residency)
// that model waits drive: WaitBegin may page the idle sandbox out or tear
// it down for the predicted wait; WaitEnd brings it back ahead of the next
// action.
type waitAware interface {
	WaitBegin(a *controller.Agent, predicted time.Duration)
	WaitEnd(a *controller.Agent)
}

// pagedOuter is the optional capability of the sandbox manager that says
// whether an agent's sandbox is paged out.
type pagedOuter interface {
	PagedOut(agentID string) bool
}

// waitBegan notes the start of an announced model wait of ag (the first
// of overlapping ones) and hands it to residency with the learned length.
func (s *Server) waitBegan(ag *agent) {
	predicted := s.waits.predict(ag.rec.ID)
	if w, ok := s.mgr.(waitAware); ok {
		w.WaitBegin(ag.a, predicted)
	}
}

// waitEnded learns the length of an announced model wait of ag and starts
// bringing its sandbox back.
func (s *Server) waitEnded(ag *agent, d time.Duration) {
	s.waits.observe(ag.rec.ID, d)
	if w, ok := s.mgr.(waitAware); ok {
		w.WaitEnd(ag.a)
	}
}

// residencyOf is the agent's residency as Status shows it.
func (s *Server) residencyOf(ag *agent, sandbox string) string {
	switch {
	case sandbox == "":
		return ResidencyAbsent
	case s.pagedOut(ag.rec.ID):
		return ResidencyPagedOut
	}
	return ResidencyResident
}

func (s *Server) pagedOut(id string) bool {
	p, ok := s.mgr.(pagedOuter)
	return ok && p.PagedOut(id)
}
