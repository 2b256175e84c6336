package api

import (
	"context"
	"fmt"
	"time"

	"github.com/tenon-dev/tenon/internal/controller"
)

// Admission slots. An agent holds one of the policy's agent-level slots
// (static-N's N, agent-reservation's reservations, pacing's charge) from
// Policy.AgentReady until Policy.AgentDone. A new agent asks for one when
// it is created; an agent recovered from the registry asks at its first
// action, so agents that a restart brought back idle hold none. An agent
// idle for SlotIdle gives its slot back when another agent waits for one
// (its sandbox stays; its next action asks again and queues like a new
// agent). A request waits at most QueueTimeout for its slot and its
// admission, then fails with a *QueueTimeoutError (503).

// slotRequest is one Policy.AgentReady call; done is closed when it
// returned, err holds its error.
type slotRequest struct {
	done chan struct{}
	err  error
}

// requestSlot returns the pending or granted slot request of ag, starting
// one when it has none. The request runs in the background under ag.ctx,
// so a client that gives up keeps the agent's place in the queue.
func (s *Server) requestSlot(ag *agent) *slotRequest {
	ag.mu.Lock()
	defer ag.mu.Unlock()
	if ag.req != nil {
		return ag.req
	}
	r := &slotRequest{done: make(chan struct{})}
	ag.req = r
	s.queuedAgents.Add(1)
	go func() {
		err := s.cfg.Policy.AgentReady(ag.ctx, ag.a)
		s.queuedAgents.Add(-1)
		ag.mu.Lock()
		r.err = err
		if err == nil {
			ag.slot, ag.started = true, true
			ag.slotAt = s.cfg.Clock.Now()
		} else {
			ag.req = nil // the next action asks again
		}
		ag.mu.Unlock()
		if err == nil {
			ag.a.Started = s.cfg.Clock.Now() // read by the holder of ag.exec after done
			s.emit(controller.Event{Kind: controller.EventAgentStart, Workflow: ag.rec.ID})
		}
		close(r.done)
	}()
	return r
}

// releaseSlot gives ag's slot back to the policy, if it holds one. The
// caller holds ag.exec.
func (s *Server) releaseSlot(ag *agent) {
	ag.mu.Lock()
	held := ag.slot
	if held {
		ag.slot, ag.req = false, nil
	}
	ag.mu.Unlock()
	if held {
		s.cfg.Policy.AgentDone(ag.a, nil)
	}
}

// idleSlot reports whether ag holds a slot it has not used for SlotIdle
// at now: no action running or waiting, no model wait announced.
func (ag *agent) idleSlot(now time.Time, idle time.Duration) bool {
	ag.mu.Lock()
	defer ag.mu.Unlock()
	if !ag.slot || ag.running || ag.waiting > 0 || ag.model > 0 {
		return false
	}
	last := ag.slotAt
	if ag.lastDone.After(last) {
		last = ag.lastDone
	}
	return now.Sub(last) >= idle
}

// reclaimSlots takes the slots of idle agents back while other agents
// wait for one, and returns how many it took. An agent whose action
// starts meanwhile (it holds ag.exec) keeps its slot.
func (s *Server) reclaimSlots() int {
	if s.queuedAgents.Load() == 0 {
		return 0
	}
	now := s.cfg.Clock.Now()
	n := 0
	for _, ag := range s.sortedAgents() {
		if !ag.idleSlot(now, s.cfg.SlotIdle) {
			continue
		}
		select {
		case ag.exec <- struct{}{}:
		default:
			continue
		}
		if !ag.retired && ag.idleSlot(now, s.cfg.SlotIdle) {
			s.releaseSlot(ag)
			s.log.Info("idle agent gave its slot back", "agent", ag.rec.ID, "idle", s.cfg.SlotIdle)
			n++
		}
		<-ag.exec
		if s.queuedAgents.Load() == 0 {
			break
		}
	}
	return n
}

// QueueTimeoutError says a request waited QueueTimeout for its agent's
// slot or its action's admission (503, with Retry-After).
type QueueTimeoutError struct {
	Agent         string
	Waited        time.Duration
	QueuedAgents  int
	QueuedActions int
}

func (e *QueueTimeoutError) Error() string {
	return fmt.Sprintf("api: agent %s was not admitted within %s (%d agents and %d actions queued): retry later, or raise --queue-timeout",
		e.Agent, e.Waited, e.QueuedAgents, e.QueuedActions)
}

// errQueueDeadline is the cause of a queued request's context that ran
// out of QueueTimeout.
var errQueueDeadline = fmt.Errorf("api: queue deadline")

// queueErr returns the *QueueTimeoutError for ag when ctx ended at its
// queue deadline, else nil.
func (s *Server) queueErr(ctx context.Context, ag *agent) error {
	if context.Cause(ctx) != errQueueDeadline {
		return nil
	}
	return &QueueTimeoutError{
		Agent: ag.rec.ID, Waited: s.cfg.QueueTimeout,
		QueuedAgents: int(s.queuedAgents.Load()), QueuedActions: int(s.queuedActions.Load()),
	}
}
