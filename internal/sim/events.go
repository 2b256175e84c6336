package sim

import (
	"container/heap"
	"time"
)

type evKind int

const (
	evArrive evKind = iota
	evWaitEnd
	evSandboxUp  // creation or rematerialization finished
	evTornDown   // a teardown finished
	evPhase      // a running action reached a phase boundary
	evGateSample // gate period: observe, Step, apply; residency reclaim
	evRecord     // append a point to the memory time series
	evOOMCheck   // the projected usage crosses the budget
	evTimeout    // an action's timeout expires
	evSchedule   // a coalesced admission Schedule
	evPagedIn    // a paged-out sandbox's memory is back; its action is ready
	evThawed     // a sandbox paged out while frozen has its memory back
)

// event is one scheduled occurrence. gen guards against stale events: an
// agent's or sandbox's generation changes when what the event was for is
// cancelled.
type event struct {
	t    time.Duration
	seq  uint64
	kind evKind
	ag   *agent
	sb   *sandbox
	gen  uint64
}

type eventHeap []*event

func (h eventHeap) Len() int { return len(h) }
func (h eventHeap) Less(i, j int) bool {
	if h[i].t != h[j].t {
		return h[i].t < h[j].t
	}
	return h[i].seq < h[j].seq
}
func (h eventHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *eventHeap) Push(x any)   { *h = append(*h, x.(*event)) }
func (h *eventHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return e
}

// queue is the simulation's agenda, ordered by time and then insertion.
type queue struct {
	h   eventHeap
	seq uint64
}

func (q *queue) push(e *event) {
	q.seq++
	e.seq = q.seq
	heap.Push(&q.h, e)
}

func (q *queue) pop() *event { return heap.Pop(&q.h).(*event) }
func (q *queue) len() int    { return q.h.Len() }
