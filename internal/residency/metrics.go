package residency

import (
	"sync"
	"time"
)

// Metrics are the manager's counters (seed 000 Table 3).
type Metrics struct {
	Boundaries            int // action-done boundaries checked
	RestartableBoundaries int
	Creates               int // fresh sandboxes
	Teardowns             int // completed teardowns
	TeardownFailures      int // aborted teardowns (sandbox kept resident)
	Rematerializations    int // completed rematerializations
	RematFailures         int // failed rematerialization tries (each retry counts)
	RematDeferred         int // rematerializations that waited for red pressure to fall
	BytesCaptured         int64
	MemoryReclaimed       int64         // working set at teardown, summed
	LifecycleOverhead     time.Duration // teardown + rematerialization time, failures included
}

// RestartableShare is the fraction of boundaries that were restartable.
func (m Metrics) RestartableShare() float64 {
	if m.Boundaries == 0 {
		return 0
	}
	return float64(m.RestartableBoundaries) / float64(m.Boundaries)
}

// EventKind names an event.
type EventKind string

// Event kinds.
const (
	EventBoundary        EventKind = "boundary"
	EventCreate          EventKind = "create"
	EventTeardown        EventKind = "teardown"
	EventTeardownFailed  EventKind = "teardown_failed"
	EventRemat           EventKind = "rematerialize"
	EventRematFailed     EventKind = "rematerialize_failed"
	EventRematDeferred   EventKind = "rematerialize_deferred"
	EventRecovered       EventKind = "recovered"
	EventLeftover        EventKind = "leftover_destroyed"
	EventAgentLost       EventKind = "agent_lost"
	EventDestroyFailed   EventKind = "destroy_failed"
	EventReclaimDecision EventKind = "reclaim_decision"
)

// Event is one lifecycle event.
type Event struct {
	Time       time.Time
	Kind       EventKind
	Agent      string
	Sandbox    string
	Generation uint64
	Bytes      int64 // captured bytes (teardown)
	WorkingSet int64
	Duration   time.Duration
	Reason     string
	Err        error
}

// Sink receives events; it must not block for long.
type Sink func(Event)

type metrics struct {
	mu sync.Mutex
	m  Metrics
}

func (c *metrics) update(f func(*Metrics)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f(&c.m)
}

func (c *metrics) get() Metrics {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m
}
