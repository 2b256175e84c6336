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

	ctx      context.Context // cancelled when the agent is deleted or the server stops
	cancel   context.CancelFunc
	ready    chan struct{} // closed when AgentReady returned
	readyErr error         // set before ready is closed
	exec     chan struct{} // 1-slot semaphore serializing actions
	retired  bool          // AgentDone was called; guarded by exec

	mu       sync.Mutex
	created  int       // sandboxes created for this agent
	sandbox  string    // current sandbox, "" when absent
	running  bool      // an action executes
	waiting  int       // queued actions
	model    int       // announced or proxied model waits in progress
	actions  int       // actions completed
	lastDone time.Time // end of the last action (or creation)
	// waitStart is when the announced model wait in progress began;
	// waitSeen says one was announced since the last action ended.
	waitStart time.Time
	waitSeen  bool
}

// state reports the agent's API state at now.
func (ag *agent) state(now time.Time, idleAfter time.Duration) string {
	select {
	case <-ag.ready:
	default:
		return StateQueued
	}
	ag.mu.Lock()
	defer ag.mu.Unlock()
	switch {
	case ag.running || ag.waiting > 0:
		return StateRunning
	case ag.model > 0:
		return StateModel
	case !ag.lastDone.IsZero() && now.Sub(ag.lastDone) > idleAfter:
		return StateModel // inferred from idle time
	}
	return StateIdle
}
