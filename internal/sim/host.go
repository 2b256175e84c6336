package sim

import (
	"math"
	"slices"
	"strings"
	"time"
)

// sbState is where a sandbox is in its life.
type sbState int

const (
	sbCreating sbState = iota // being created or rematerialized; holds no memory yet
	sbLive                    // ready; actions may run in it
	sbTearing                 // being torn down; holds its memory until the end
	sbGone                    // destroyed or killed
)

// sandbox is one simulated sandbox and its memory state.
type sandbox struct {
	id    string
	ag    *agent
	state sbState
	remat bool // made by rematerialization (holds a lifecycle slot while created)

	floor  int64 // retained memory: base, files and background retain, bytes
	pinned bool  // a background process is alive: not restartable
	// paged: the idle sandbox's floor is paged out and costs compressed
	// bytes (residency's page-out tier).
	paged      bool
	compressed int64

	act      *profile      // the running action; nil when idle
	progress time.Duration // the running action's progress
	frozen   bool
	frozenAt time.Duration // when the gate froze it
	oomWait  bool          // waits for memory under the domain's OOM hold (hold.go)
	// faultWait: the gate let it run, but it stays frozen because its
	// paged-out memory does not fit back even with the cold sandboxes
	// swapped out (thaw); a live sandbox thawed there faults its pages in
	// and sleeps in the kernel at the limit.
	faultWait bool

	mem  int64         // memory at tmat, bytes
	tmat time.Duration // when mem and progress were last brought up to date
	rate float64       // growth rate counted in the host's R, bytes per second
	cpu  time.Duration // accumulated CPU time (time spent running unfrozen)
	// stall is its accumulated memory stall on v2 (v2.go).
	stall time.Duration
	gen   uint64 // generation of the pending phase event

	activeIdx int // index in host.active, -1 when not running unfrozen
	allIdx    int // index in host.all, -1 when it holds no memory slot
}

// Accounting is the host's memory bookkeeping after an event.
type Accounting struct {
	T         time.Duration
	Used      int64 // Σ sandbox memory as maintained by deltas
	Allocated int64 // cumulative bytes allocated
	Freed     int64 // cumulative bytes freed
	Resident  int64 // Σ sandbox memory recomputed from the sandboxes
	Budget    int64
}

// host is the workload domain: every sandbox's memory, and the linear
// projection of usage between events (used + R·t − S, t in seconds).
type host struct {
	budget       int64
	used         int64
	alloc, freed int64
	peak         int64
	r, s         float64
	active       []*sandbox // running an action and not frozen
	all          []*sandbox // created (live or tearing), in creation order modulo removals
	byID         map[string]*sandbox
	// sorted holds the same sandboxes as all, by id: the gate's observation
	// is built in this order, so gate.Controller.Step finds it sorted and
	// skips its own sort (a large share of a step at thousands of sandboxes).
	sorted []*sandbox
}

func newHost(budget int64) *host {
	return &host{budget: budget, byID: map[string]*sandbox{}}
}

func (h *host) add(sb *sandbox) {
	sb.activeIdx, sb.allIdx = -1, len(h.all)
	h.all = append(h.all, sb)
	h.byID[sb.id] = sb
	i, _ := slices.BinarySearchFunc(h.sorted, sb.id, bySandboxID)
	h.sorted = slices.Insert(h.sorted, i, sb)
}

func bySandboxID(sb *sandbox, id string) int { return strings.Compare(sb.id, id) }

// remove frees a sandbox's memory and forgets it.
func (h *host) remove(sb *sandbox, now time.Duration) {
	h.setActive(sb, now, false)
	h.setMem(sb, 0)
	if i := sb.allIdx; i >= 0 {
		last := h.all[len(h.all)-1]
		h.all[i], last.allIdx = last, i
		h.all = h.all[:len(h.all)-1]
		sb.allIdx = -1
		if j, ok := slices.BinarySearchFunc(h.sorted, sb.id, bySandboxID); ok {
			h.sorted = slices.Delete(h.sorted, j, j+1)
		}
	}
	delete(h.byID, sb.id)
	sb.state, sb.oomWait = sbGone, false
	sb.gen++
}

func (h *host) setMem(sb *sandbox, m int64) {
	d := m - sb.mem
	if d > 0 {
		h.alloc += d
	} else {
		h.freed -= d
	}
	h.used += d
	sb.mem = m
	h.peak = max(h.peak, min(h.used, h.budget)) // the kernel never lets usage pass the limit
}

// advance brings a sandbox's progress, CPU time and memory up to now.
func (h *host) advance(sb *sandbox, now time.Duration) {
	if sb.activeIdx >= 0 {
		dt := now - sb.tmat
		sb.progress += dt
		sb.cpu += dt
		h.s += sb.rate * dt.Seconds()
	}
	sb.tmat = now
	m := sb.floor
	if sb.act != nil {
		m += sb.act.memAt(sb.progress)
	}
	if sb.paged {
		m = sb.compressed
	}
	h.setMem(sb, m)
}

// setActive advances sb and puts it in or out of the running-unfrozen set,
// updating its growth rate.
func (h *host) setActive(sb *sandbox, now time.Duration, on bool) {
	h.advance(sb, now)
	if on && sb.activeIdx < 0 {
		sb.activeIdx = len(h.active)
		h.active = append(h.active, sb)
	} else if !on && sb.activeIdx >= 0 {
		i := sb.activeIdx
		last := h.active[len(h.active)-1]
		h.active[i], last.activeIdx = last, i
		h.active = h.active[:len(h.active)-1]
		sb.activeIdx = -1
	}
	h.refreshRate(sb, now)
}

// refreshRate sets sb's rate for its current phase (0 when not active).
func (h *host) refreshRate(sb *sandbox, now time.Duration) {
	var r float64
	if sb.activeIdx >= 0 && sb.act != nil {
		r = sb.act.rateAt(sb.progress)
	}
	h.r += r - sb.rate
	h.s += (r - sb.rate) * now.Seconds()
	sb.rate = r
}

// advanceAll brings every running sandbox up to now and recomputes the
// projection exactly.
func (h *host) advanceAll(now time.Duration) {
	var r float64
	for _, sb := range h.active {
		h.advance(sb, now)
		r += sb.rate
	}
	h.r, h.s = r, r*now.Seconds()
}

// projected is the usage at now by the linear projection.
func (h *host) projected(now time.Duration) int64 {
	return h.used + int64(h.r*now.Seconds()-h.s)
}

// crossing is the first time after now at which the projection exceeds
// limit, or -1 when usage is not growing.
func (h *host) crossing(now time.Duration, limit int64) time.Duration {
	if h.r <= 0 {
		return -1
	}
	tc := (float64(limit-h.used) + h.s) / h.r
	d := time.Duration(math.Ceil(tc*1e9)) + 1
	return max(d, now+time.Microsecond)
}

// largest is the OOM killer's victim: the sandbox with the most memory
// (ties: the smaller id), or nil.
func (h *host) largest() *sandbox {
	var v *sandbox
	for _, sb := range h.all {
		if sb.mem <= 0 {
			continue
		}
		if v == nil || sb.mem > v.mem || (sb.mem == v.mem && sb.id < v.id) {
			v = sb
		}
	}
	return v
}

// accounting reports the bookkeeping, recomputing residency from scratch.
func (h *host) accounting(now time.Duration) Accounting {
	var res int64
	for _, sb := range h.all {
		res += sb.mem
	}
	return Accounting{T: now, Used: h.used, Allocated: h.alloc, Freed: h.freed, Resident: res, Budget: h.budget}
}
