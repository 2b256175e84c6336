package api

import (
	"context"
	"sync"
	"time"

	"github.com/tenon-dev/tenon/internal/controller"
)

// agent is the server's state of one logical agent.
type agent struct {
	rec       record
	workspace string
	a         *controller.Agent // owned by the holder of exec

	ctx     context.Context // cancelled when the agent is deleted or the server stops
	cancel  context.CancelFunc
	exec    chan struct{} // 1-slot semaphore serializing actions
	retired bool          // the agent was deleted or the server stopped; guarded by exec

	mu       sync.Mutex
	req      *slotRequest // pending or granted admission slot request; nil when none
	slot     bool         // holds a slot (AgentReady returned, AgentDone not called since)
	started  bool         // held a slot once
	slotAt   time.Time    // when the slot was granted
	created  int          // sandboxes created for this agent
	sandbox  string       // current sandbox, "" when absent
	running  bool         // an action executes
	waiting  int          // queued actions
	model    int          // announced or proxied model waits in progress
	actions  int          // actions completed
	lastDone time.Time    // end of the last action (or creation)
	// waitStart is when the announced model wait in progress began;
	// waitSeen says one was announced since the last action ended.
	waitStart time.Time
	waitSeen  bool
}

// state reports the agent's API state at now.
func (ag *agent) state(now time.Time, idleAfter time.Duration) string {
	ag.mu.Lock()
	defer ag.mu.Unlock()
	switch {
	case ag.req != nil && !ag.slot:
		return StateQueued
	case ag.running || ag.waiting > 0:
		return StateRunning
	case ag.model > 0:
		return StateModel
	case !ag.lastDone.IsZero() && now.Sub(ag.lastDone) > idleAfter:
		return StateModel // inferred from idle time
	}
	return StateIdle
}
