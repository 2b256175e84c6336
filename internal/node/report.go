package node

import (
	"context"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Report kinds: what tenon did to an agent pod's container.
const (
	KindAdopted  = "adopted"    // its cgroup went under the domain and the control loop watches it
	KindPaused   = "paused"     // the gate froze it
	KindResumed  = "resumed"    // the gate thawed it
	KindOOMKill  = "oom_killed" // a task of it was OOM-killed; Cause says why
	KindReleased = "released"   // it stopped and tenon let go of it
	// KindSuspended and KindUnsuspended are about the pod: tenon suspended
	// its Sandbox (the pod went) and it came back at its harness's request.
	KindSuspended   = "suspended"
	KindUnsuspended = "unsuspended"
)

// Report is one thing tenon did to an agent pod's container, with why.
type Report struct {
	Time      time.Time
	Pod       PodRef
	Container string // the container's name in the pod
	Sandbox   string // its sandbox id (the container id)
	Kind      string
	Cause     Cause  // KindOOMKill only
	Reason    string // in words, for people (a pod event's message)
	// Took is how long the step took where it has a duration: for
	// KindAdopted the time from the runtime's CreateContainer to adoption.
	Took time.Duration
}

// Reporter receives every Report; the apiserver path turns them into pod
// events. It is called on the node's goroutines and must not block.
type Reporter interface {
	Report(Report)
}

// PodStatus is what tenon did to one pod so far.
type PodStatus struct {
	Pod        PodRef          `json:"pod"`
	Containers int             `json:"containers"` // adopted and running
	Paused     int             `json:"paused"`     // times the gate froze one of its containers
	Suspended  int             `json:"suspended"`  // times tenon suspended its Sandbox
	OOMKills   map[Cause]int   `json:"oom_kills,omitempty"`
	Last       string          `json:"last,omitempty"` // the latest reason
	LastTime   time.Time       `json:"last_time,omitzero"`
	byID       map[string]bool // adopted sandboxes
}

// reports records Reports: the log, the metrics, the per-pod status and
// the optional Reporter.
type reports struct {
	log  *slog.Logger
	next Reporter

	mu   sync.Mutex
	pods map[string]*PodStatus

	adopted  prometheus.Gauge
	pauses   *prometheus.CounterVec
	ooms     *prometheus.CounterVec
	adoptSec prometheus.Histogram
}

func newReports(log *slog.Logger, next Reporter, reg prometheus.Registerer) *reports {
	r := &reports{log: log, next: next, pods: map[string]*PodStatus{},
		adopted: prometheus.NewGauge(prometheus.GaugeOpts{Name: "tenon_node_adopted_containers",
			Help: "Containers of agent pods under tenon's control loop."}),
		pauses: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tenon_node_pauses_total",
			Help: "Times the gate froze a container of the pod."}, []string{"namespace", "pod"}),
		ooms: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tenon_node_oom_kills_total",
			Help: "OOM kills in the pod's adopted containers, by cause (container-limit, node-budget, host)."}, []string{"namespace", "pod", "cause"}),
		adoptSec: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "tenon_node_adopt_seconds",
			Help: "Time from the runtime's CreateContainer to the container's adoption.", Buckets: prometheus.ExponentialBuckets(0.01, 2, 10)}),
	}
	if reg != nil {
		reg.MustRegister(r.adopted, r.pauses, r.ooms, r.adoptSec)
	}
	return r
}

// record logs, counts and passes on rep.
func (r *reports) record(rep Report) {
	attrs := []any{"pod", rep.Pod.String(), "container", rep.Container, "sandbox", rep.Sandbox, "reason", rep.Reason}
	if rep.Cause != "" {
		attrs = append(attrs, "cause", string(rep.Cause))
	}
	if rep.Took > 0 {
		attrs = append(attrs, "took", rep.Took)
	}
	level := slog.LevelInfo
	if rep.Kind == KindOOMKill {
		level = slog.LevelWarn
	}
	r.log.Log(context.Background(), level, "node: "+rep.Kind, attrs...)
	r.mu.Lock()
	key := rep.Pod.String()
	ps := r.pods[key]
	if ps == nil {
		ps = &PodStatus{Pod: rep.Pod, byID: map[string]bool{}}
		r.pods[key] = ps
	}
	ps.Last, ps.LastTime = rep.Reason, rep.Time
	switch rep.Kind {
	case KindAdopted:
		ps.byID[rep.Sandbox] = true
		r.adoptSec.Observe(rep.Took.Seconds())
	case KindReleased:
		delete(ps.byID, rep.Sandbox)
	case KindSuspended:
		ps.Suspended++
	case KindPaused:
		ps.Paused++
		r.pauses.WithLabelValues(rep.Pod.Namespace, rep.Pod.Name).Inc()
	case KindOOMKill:
		if ps.OOMKills == nil {
			ps.OOMKills = map[Cause]int{}
		}
		ps.OOMKills[rep.Cause]++
		r.ooms.WithLabelValues(rep.Pod.Namespace, rep.Pod.Name, string(rep.Cause)).Inc()
	}
	ps.Containers = len(ps.byID)
	n := 0
	for _, p := range r.pods {
		n += len(p.byID)
	}
	r.adopted.Set(float64(n))
	r.mu.Unlock()
	if r.next != nil {
		r.next.Report(rep)
	}
}

// report records a report about pod as a whole (no container).
func (n *Node) report(pod PodRef, kind, reason string) {
	n.rep.record(Report{Time: n.cfg.Clock.Now(), Pod: pod, Kind: kind, Reason: reason})
}

// status returns every pod's status sorted by pod.
func (r *reports) status() []PodStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]PodStatus, 0, len(r.pods))
	for _, p := range r.pods {
		c := *p
		c.byID = nil
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Pod.String() < out[j].Pod.String() })
	return out
}
