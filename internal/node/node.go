package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tenon-dev/tenon/internal/cgroup"
	"github.com/tenon-dev/tenon/internal/clock"
	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/sandbox"
)

// Adopter is the backend of adopted containers (internal/sandbox/adopted).
type Adopter interface {
	Add(id, path string, labels map[string]string) (sandbox.Info, error)
	Remove(ctx context.Context, id string) error
	Memory(id string) (cgroup.MemoryStats, error)
}

// Config is what a Node is built from.
type Config struct {
	// Domain is the workload domain's cgroup path (e.g. "tenon-node"):
	// adopted containers' cgroups go under it.
	Domain string
	// DomainHits reads the domain's limit hits (cgroup.MemoryStats.LimitHits),
	// for classifying OOM kills.
	DomainHits func() (int64, error)
	Backend    Adopter
	// Policy is the daemon's policy, already started over Live and
	// Backend with Emit as its event sink.
	Policy controller.Policy
	Live   *controller.LiveSet
	// Reporter also receives every report (nil: none).
	Reporter Reporter
	// Metrics registers the node's metrics (nil: none).
	Metrics prometheus.Registerer
	Clock   clock.Clock  // nil: the real clock
	Log     *slog.Logger // nil discards
	// OOMPeriod is how often the adopted containers' OOM counters are
	// read (0: 100 ms, the gate's period); each read is also a sample of
	// a running action's memory (harness.go).
	OOMPeriod time.Duration
	// Suspender is residency through the cluster (nil: pods are never
	// suspended; the harness API still drives admission and pacing).
	Suspender Suspender
}

// Node adopts agent pods' containers and reports what the policy did to
// them. Its methods are safe for concurrent use: the NRI plugin calls
// them from the runtime's requests, the policy's loops through Emit.
type Node struct {
	cfg Config
	log *slog.Logger
	rep *reports

	mu       sync.Mutex
	created  map[string]time.Time   // container id -> when the runtime asked to create it
	adopted  map[string]*adoptedCtr // sandbox id -> container
	released time.Time              // when the OOM hold was last released to the OOM killer
	domHits  int64                  // the domain's limit hits at the last OOM check
	domHitAt time.Time              // when they last rose
	agents   map[PodRef]*podAgent   // pods whose harness talks to the node (namespace and name)
	seq      int                    // actions started through the harness
}

// adoptedCtr is one adopted container.
type adoptedCtr struct {
	pod   PodRef
	name  string
	agent *controller.Agent
	last  Counters  // its counters at the last OOM check
	hitAt time.Time // when its own limit was last reached
	full  bool      // its peak is at its own limit
	// paused is whether the gate's last word on it was a pause.
	paused bool
}

// New builds a node over cfg.
func New(cfg Config) *Node {
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.OOMPeriod <= 0 {
		cfg.OOMPeriod = 100 * time.Millisecond
	}
	return &Node{cfg: cfg, log: cfg.Log, rep: newReports(cfg.Log, cfg.Reporter, cfg.Metrics),
		created: map[string]time.Time{}, adopted: map[string]*adoptedCtr{}, agents: map[PodRef]*podAgent{}}
}

// Status is what tenon did to each agent pod so far.
func (n *Node) Status() []PodStatus { return n.rep.status() }

// Create decides where a container being created goes: for an agent
// pod's container, its cgroups path under the domain (ok true); other
// containers are left alone.
func (n *Node) Create(pod PodRef, annotations map[string]string, containerID string) (cgroupsPath string, ok bool) {
	if !IsAgent(annotations) {
		return "", false
	}
	n.mu.Lock()
	n.created[containerID] = n.cfg.Clock.Now()
	n.mu.Unlock()
	return CgroupsPath(n.cfg.Domain, containerID), true
}

// Start adopts a starting container whose cgroup is under the domain
// (Create put it there, or a run before a restart did): it becomes a
// live sandbox of the policy. Containers elsewhere are ignored.
func (n *Node) Start(pod PodRef, name, containerID, cgroupsPath string) error {
	rel, ok := underDomain(n.cfg.Domain, cgroupsPath)
	if !ok {
		return nil
	}
	info, err := n.cfg.Backend.Add(containerID, rel, map[string]string{"pod": pod.String(), "container": name})
	if err != nil {
		return fmt.Errorf("adopting container %s of pod %s: %w", name, pod, err)
	}
	a := &controller.Agent{ID: pod.String() + "/" + name, SandboxID: containerID}
	c := &adoptedCtr{pod: pod, name: name, agent: a}
	if m, err := n.cfg.Backend.Memory(containerID); err == nil {
		c.last = Counters{Kills: m.OOMKills, LimitHits: m.LimitHits}
	}
	now := n.cfg.Clock.Now()
	n.mu.Lock()
	n.adopted[containerID] = c
	n.harnessUp(pod, containerID)
	t0, seen := n.created[containerID]
	delete(n.created, containerID)
	n.mu.Unlock()
	n.cfg.Live.Add(a, info)
	// Its processes run whenever they are not frozen: to the gate an
	// adopted container is always inside an action.
	n.cfg.Live.SetRunning(containerID, true)
	n.cfg.Policy.SandboxUp(a, info)
	rep := Report{Time: now, Pod: pod, Container: name, Sandbox: containerID, Kind: KindAdopted,
		Reason: "adopted: its memory counts against the node's agent budget, the gate and the OOM hold act on it"}
	if seen {
		rep.Took = now.Sub(t0)
	} else {
		rep.Reason = "re-adopted after a restart of tenon node"
	}
	n.rep.record(rep)
	return nil
}

// Stop lets go of a stopping or removed container: out of the live set
// first (the gate stops seeing it), then thawed and forgotten by the
// backend, so that the runtime can stop it. Unknown ids are ignored.
func (n *Node) Stop(ctx context.Context, containerID, why string) error {
	n.mu.Lock()
	c := n.adopted[containerID]
	delete(n.adopted, containerID)
	delete(n.created, containerID)
	n.mu.Unlock()
	if c == nil {
		return nil
	}
	n.readDomain()
	n.checkOne(containerID, c) // a kill that stopped it is still classified
	n.cfg.Live.Remove(containerID)
	err := n.cfg.Backend.Remove(ctx, containerID)
	n.cfg.Policy.SandboxDown(c.agent, containerID)
	n.rep.record(Report{Time: n.cfg.Clock.Now(), Pod: c.pod, Container: c.name, Sandbox: containerID, Kind: KindReleased, Reason: why})
	n.harnessDown(c.pod, containerID)
	return err
}

// Emit is the policy's event sink (controller.Env.Emit): the gate's pause
// and resume of an adopted container are reported for its pod; the OOM
// hold's release is remembered for classifying the kill that follows.
func (n *Node) Emit(e controller.Event) {
	switch e.Kind {
	case controller.EventPause, controller.EventResume:
		n.mu.Lock()
		c := n.adopted[e.Sandbox]
		// The gate allows every new sandbox once: only a thaw of a frozen
		// one is news.
		news := c != nil && (e.Kind == controller.EventPause) != c.paused
		if news {
			c.paused = e.Kind == controller.EventPause
		}
		n.mu.Unlock()
		if !news {
			return
		}
		kind, reason := KindPaused, "frozen by the gate: "+e.Reason+"; the node's agent memory is short and it grows"
		if e.Kind == controller.EventResume {
			kind, reason = KindResumed, "thawed by the gate: "+e.Reason
		}
		n.rep.record(Report{Time: n.cfg.Clock.Now(), Pod: c.pod, Container: c.name, Sandbox: e.Sandbox, Kind: kind, Reason: reason})
	case controller.EventHold:
		n.log.Info("node: OOM hold "+e.Reason, "held_s", e.DurationS)
		if e.Reason == holdReleased {
			n.mu.Lock()
			n.released = n.cfg.Clock.Now()
			n.mu.Unlock()
		}
	case controller.EventError:
		n.log.Warn("node: control loop error", "sandbox", e.Sandbox, "err", e.Error)
	}
}

// holdReleased is the reason of the live policy's hold event when the hold
// lets the OOM killer act (internal/live applyHold).
const holdReleased = "released to the OOM killer"

// releaseWindow is how long after the hold's release an OOM kill at the
// budget is attributed to it.
const releaseWindow = 2 * time.Second

// WatchOOM reads the adopted containers' OOM counters every OOMPeriod
// until ctx is done, classifying and reporting every kill.
func (n *Node) WatchOOM(ctx context.Context) {
	if hits, err := n.cfg.DomainHits(); err == nil {
		n.mu.Lock()
		n.domHits = hits
		n.mu.Unlock()
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-n.cfg.Clock.After(n.cfg.OOMPeriod):
		}
		n.checkOOM()
	}
}

// checkOOM reads the domain's limit hits and every adopted container's
// counters once.
func (n *Node) checkOOM() {
	n.readDomain()
	n.mu.Lock()
	ids := make(map[string]*adoptedCtr, len(n.adopted))
	for id, c := range n.adopted {
		ids[id] = c
	}
	n.mu.Unlock()
	for id, c := range ids {
		n.checkOne(id, c)
	}
}

// readDomain notes when the domain's limit was last reached.
func (n *Node) readDomain() {
	hits, err := n.cfg.DomainHits()
	if err != nil {
		return
	}
	now := n.cfg.Clock.Now()
	n.mu.Lock()
	if hits > n.domHits {
		n.domHitAt = now
	}
	n.domHits = hits
	n.mu.Unlock()
}

// limitSlack is how close to its own limit a container's peak must come
// for the limit to count as reached.
const limitSlack = 1 << 20

// atLimit reports whether a group's peak reached its own limit. On v1 with
// swap accounting a charge fails at memsw's limit first, whose failure
// count the kernel does not keep (only memory.failcnt is tracked): the
// peak at the limit is then the only trace of the hit.
func atLimit(m cgroup.MemoryStats) bool {
	return m.Limit > 0 && m.Peak >= m.Limit-limitSlack
}

// checkOne reports the kills in container id since its last check.
func (n *Node) checkOne(id string, c *adoptedCtr) {
	m, err := n.cfg.Backend.Memory(id)
	if err != nil {
		if !errors.Is(err, sandbox.ErrNotFound) {
			n.log.Debug("node: reading OOM counters", "sandbox", id, "err", err)
		}
		return
	}
	now := n.cfg.Clock.Now()
	cur := Counters{Kills: m.OOMKills, LimitHits: m.LimitHits}
	n.mu.Lock()
	prev := c.last
	c.last = cur
	full := atLimit(m)
	if cur.LimitHits > prev.LimitHits || full && !c.full {
		c.hitAt = now
	}
	c.full = full
	n.sampleAction(c.pod, id, m.Usage)
	cause := ClassifyOOM(now, c.hitAt, n.domHitAt)
	released := !n.released.IsZero() && now.Sub(n.released) <= releaseWindow
	n.mu.Unlock()
	for range cur.Kills - prev.Kills {
		n.rep.record(Report{Time: now, Pod: c.pod, Container: c.name, Sandbox: id, Kind: KindOOMKill,
			Cause: cause, Reason: cause.Reason(released && cause == CauseNodeBudget)})
	}
}
