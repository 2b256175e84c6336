package residency

import (
	"sync"
	"time"
)

// Metrics are the manager's counters (seed 000 Table 3, issue point 7).
// Every Event carries a snapshot taken just after the event's own update.
type Metrics struct {
	Boundaries            int `json:"boundaries"` // action-done boundaries checked
	RestartableBoundaries int `json:"restartable_boundaries"`
	Creates               int `json:"creates"`            // fresh sandboxes
	Teardowns             int `json:"teardowns"`          // completed teardowns
	TeardownFailures      int `json:"teardown_failures"`  // aborted teardowns (sandbox kept resident)
	Rematerializations    int `json:"rematerializations"` // completed rematerializations
	RematFailures         int `json:"remat_failures"`     // failed rematerialization tries (each retry counts)
	RematDeferred         int `json:"remat_deferred"`     // rematerializations and page-ins that waited for red pressure to fall
	CreatesDeferred       int `json:"creates_deferred"`   // first sandboxes whose creation waited for red pressure to fall
	ReclaimsDropped       int `json:"reclaims_dropped"`   // decided reclaims not carried out: by their turn for a slot, residency no longer chose them, or chose the other way
	// BytesCaptured is what teardowns wrote to the blob store (content not
	// stored before, plus manifests); BytesState is the payload size of the
	// state they captured (unchanged or shared files included).
	BytesCaptured   int64 `json:"bytes_captured"`
	BytesState      int64 `json:"bytes_state"`
	MemoryReclaimed int64 `json:"memory_reclaimed_bytes"` // working set at teardown, summed
	// PageOuts and PageIns count completed page-outs and page-ins,
	// PageFailures failed ones; BytesPagedOut and BytesPagedIn are the
	// anonymous memory they moved, MemoryPagedOut the drop of the
	// sandboxes' resident memory (page cache included) they caused.
	PageOuts     int `json:"page_outs"`
	PageIns      int `json:"page_ins"`
	PageFailures int `json:"page_failures"`
	// ThawDeferrals counts page-ins that could not bring all of a
	// sandbox's memory back and left it frozen (ErrPageInIncomplete: the
	// domain at its budget under the OOM hold), each try; they are not
	// PageFailures.
	ThawDeferrals     int           `json:"thaw_deferrals"`
	BytesPagedOut     int64         `json:"bytes_paged_out"`
	BytesPagedIn      int64         `json:"bytes_paged_in"`
	MemoryPagedOut    int64         `json:"memory_paged_out_bytes"`
	LifecycleOverhead time.Duration `json:"lifecycle_overhead_ns"` // teardown + rematerialization time, failures included
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
	EventCreateDeferred  EventKind = "create_deferred"
	EventRecovered       EventKind = "recovered"
	EventLeftover        EventKind = "leftover_destroyed"
	EventAgentLost       EventKind = "agent_lost"
	EventDestroyFailed   EventKind = "destroy_failed"
	EventReclaimDecision EventKind = "reclaim_decision"
	EventPageOut         EventKind = "page_out"
	EventPageOutFailed   EventKind = "page_out_failed"
	EventPageIn          EventKind = "page_in"
	EventPageInFailed    EventKind = "page_in_failed"
	// EventThawDeferred: a page-in left the sandbox frozen because not all
	// of its memory could come back; emitted once per page-out, however
	// often the page-in is retried (Metrics.ThawDeferrals counts them).
	EventThawDeferred EventKind = "thaw_deferred"
)

// Event is one lifecycle event. It marshals to JSON for an event log.
type Event struct {
	Time       time.Time `json:"time"`
	Kind       EventKind `json:"kind"`
	Agent      string    `json:"agent,omitempty"`
	Sandbox    string    `json:"sandbox,omitempty"`
	Generation uint64    `json:"generation,omitempty"`
	// Bytes is what a teardown wrote to the blob store, or the anonymous
	// memory a page-out paged out or a page-in faulted back.
	Bytes      int64         `json:"bytes,omitempty"`
	Freed      int64         `json:"freed_bytes,omitempty"` // drop of the sandbox's resident memory (page_out)
	StateBytes int64         `json:"state_bytes,omitempty"` // payload bytes of the captured state (teardown)
	WorkingSet int64         `json:"working_set_bytes,omitempty"`
	Duration   time.Duration `json:"duration_ns,omitempty"`
	Reason     string        `json:"reason,omitempty"`
	Err        error         `json:"-"`
	Error      string        `json:"error,omitempty"` // Err's text
	// Metrics is the manager's counters just after this event.
	Metrics Metrics `json:"metrics"`
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
