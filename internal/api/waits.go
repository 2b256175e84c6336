package api

import (
	"sync"
	"time"

	"github.com/tenon-dev/tenon/internal/controller"
)

// waitAlpha is the weight of a new wait in the learned averages.
const waitAlpha = 0.3

// waitLearner predicts an agent's next model wait from the waits it was
// seen in: an exponentially weighted average per agent, and one over all
// agents for an agent not yet seen waiting. A wait is what the proxy or
// POST /wait announced (begin to end) or, between two actions with no
// announced wait, the idle gap. It has no clock: callers pass durations.
type waitLearner struct {
	mu      sync.Mutex
	all     time.Duration
	haveAll bool
	per     map[string]time.Duration
}

func newWaitLearner() *waitLearner { return &waitLearner{per: map[string]time.Duration{}} }

// observe learns one wait of agent id.
func (l *waitLearner) observe(id string, d time.Duration) {
	if d <= 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all, l.haveAll = ewma(l.all, d, l.haveAll), true
	old, ok := l.per[id]
	l.per[id] = ewma(old, d, ok)
}

// predict is agent id's expected next wait, 0 when no wait was seen yet.
func (l *waitLearner) predict(id string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if d, ok := l.per[id]; ok {
		return d
	}
	return l.all
}

// forget drops a deleted agent's average.
func (l *waitLearner) forget(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.per, id)
}

func ewma(old, x time.Duration, have bool) time.Duration {
	if !have {
		return x
	}
	return time.Duration(waitAlpha*float64(x) + (1-waitAlpha)*float64(old))
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
