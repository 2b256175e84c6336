package sim

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"
)

// Placement rules of a simulated cluster.
const (
	// PlaceHeadroom places by published agent slots: every Refresh each
	// node publishes its allocatable slots, the agents it holds plus
	// policy.AgentSlots (the node agent's extended resource
	// tenon.dev/agent-slots); each agent requests one slot.
	PlaceHeadroom = "headroom"
	// PlaceRequests places by static memory requests: each node's
	// allocatable is its budget, each agent requests ClusterConfig.Request.
	PlaceRequests = "requests"
)

// DefaultRefresh is how often nodes publish their slots under
// PlaceHeadroom: a node agent patching its node status every 10 s (the
// kubelet's default node status update period).
const DefaultRefresh = 10 * time.Second

// ClusterConfig describes a simulated cluster: Nodes identical hosts, each
// running Node's policy exactly as Run does (its own decision core, event
// heap and OOM killer), behind a scheduler that places every arriving
// agent on one node by Placement, as Kubernetes' default scheduler places
// pods: on a node whose allocatable, less what the pods already placed
// there request, fits the agent's request, the one with the largest
// fraction of its allocatable left (least allocated), the lowest index on
// ties. An agent that fits no node
// waits at the cluster, first come first placed, until a node frees
// requests (an agent there ends) or publishes more slots. Once placed an
// agent stays on its node: its retries run there, as a pod restarts in
// place.
type ClusterConfig struct {
	// Node is every node's configuration. Node.Workflows is the whole
	// workload, arriving at the cluster at their Arrival; every node
	// trains on it (or uses Node.Predictors) and takes its defaults from
	// it, as one Run of the whole workload would.
	Node      Config
	Nodes     int
	Placement string
	// Refresh is how often nodes publish their slots (PlaceHeadroom; 0:
	// DefaultRefresh). Between two, the scheduler counts against the last
	// published value, so it places on slots up to Refresh stale.
	Refresh time.Duration
	// Request is every agent's memory request under PlaceRequests, bytes.
	Request int64
}

// ClusterResult is what a simulated cluster did.
type ClusterResult struct {
	Placement string
	Nodes     []*Result // per node, its agents' WorkflowResult.Submit being when they were placed
	// Agents are the workload's workflows in the order of Node.Workflows.
	Agents []ClusterAgent
	Wall   time.Duration
}

// ClusterAgent is one agent's fate in the cluster.
type ClusterAgent struct {
	WorkflowResult
	Node    int           // the node it was placed on, -1 if never
	Arrival time.Duration // arrival at the cluster (WorkflowResult.Submit is its placement)
}

// QueueWait is how long the agent waited at the cluster to be placed
// (until the horizon when it never was).
func (a ClusterAgent) QueueWait() time.Duration { return a.Submit - a.Arrival }

// cluster is one run's state: the nodes, the agents not placed yet, and
// what the scheduler sees of each node.
type cluster struct {
	cfg     ClusterConfig
	nodes   []*sim
	alloc   []int // per node: allocatable agents (slots published, or budget / request)
	arrival []int // workflow indices by arrival
	next    int   // next index into arrival
	queue   []int // workflow indices waiting at the cluster, in arrival order
	placed  []int // node per workflow index, -1 until placed
	publish time.Duration
	horizon time.Duration
}

// RunCluster simulates cfg and returns what every agent and node did. It
// checks ctx every few thousand events.
func RunCluster(ctx context.Context, cfg ClusterConfig) (*ClusterResult, error) {
	c, err := newCluster(cfg)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if err := c.run(ctx); err != nil {
		return nil, err
	}
	return c.result(time.Since(start)), nil
}

func newCluster(cfg ClusterConfig) (*cluster, error) {
	switch {
	case cfg.Nodes <= 0:
		return nil, fmt.Errorf("%w: %d nodes: want at least 1", ErrBadConfig, cfg.Nodes)
	case cfg.Placement == PlaceRequests && (cfg.Request <= 0 || cfg.Request > cfg.Node.Budget):
		return nil, fmt.Errorf("%w: placement by requests needs a request > 0 and at most a node's budget, not %d bytes", ErrBadConfig, cfg.Request)
	case cfg.Placement == PlaceHeadroom && !cfg.Node.Policy.Admission:
		return nil, fmt.Errorf("%w: placement by headroom needs nodes with agent pacing (admission), not %s", ErrBadConfig, cfg.Node.Policy.Name)
	case cfg.Placement != PlaceRequests && cfg.Placement != PlaceHeadroom:
		return nil, fmt.Errorf("%w: placement %q: want %s or %s", ErrBadConfig, cfg.Placement, PlaceHeadroom, PlaceRequests)
	}
	if cfg.Refresh <= 0 {
		cfg.Refresh = DefaultRefresh
	}
	node, err := cfg.Node.withDefaults()
	if err != nil {
		return nil, err
	}
	if node.Policy.Admission && node.Predictors == nil {
		// Train once: every node's predictors are the same.
		if node.Predictors, err = NewPredictors(node.Workflows, PredictorOptions{Kinds: []string{node.Policy.Predictor}}); err != nil {
			return nil, err
		}
	}
	c := &cluster{cfg: cfg, alloc: make([]int, cfg.Nodes), placed: make([]int, len(node.Workflows)), horizon: node.Horizon}
	for i := range cfg.Nodes {
		s, err := newNode(node)
		if err != nil {
			return nil, err
		}
		c.nodes = append(c.nodes, s)
		if cfg.Placement == PlaceRequests {
			c.alloc[i] = int(node.Budget / cfg.Request)
		}
	}
	for i := range node.Workflows {
		c.arrival = append(c.arrival, i)
		c.placed[i] = -1
	}
	wfs := node.Workflows
	slices.SortStableFunc(c.arrival, func(a, b int) int { return cmp.Compare(wfs[a].Arrival, wfs[b].Arrival) })
	return c, nil
}

// run processes the nodes' events, arrivals and slot publications in time
// order (at equal times the nodes' events first, then a publication, then
// an arrival) until every agent is done or the horizon.
func (c *cluster) run(ctx context.Context) error {
	wfs := c.nodes[0].cfg.Workflows
	for steps := 1; c.busy(); steps++ {
		if steps%4096 == 0 && ctx.Err() != nil {
			return fmt.Errorf("simulating a cluster: %w", ctx.Err())
		}
		n, tn := c.earliest()
		ta := c.horizon + 1
		if c.next < len(c.arrival) {
			ta = secs(wfs[c.arrival[c.next]].Arrival)
		}
		tp := c.horizon + 1
		if c.cfg.Placement == PlaceHeadroom {
			tp = c.publish
		}
		t := min(tn, ta, tp)
		if t > c.horizon {
			c.stall()
			return nil
		}
		switch {
		case n >= 0 && tn == t:
			s := c.nodes[n]
			left := s.left
			s.step()
			if s.left < left {
				c.place(t)
			}
		case tp == t:
			for i, s := range c.nodes {
				s.now = t
				slots, _ := s.m.AgentSlots(s.clock(), s)
				c.alloc[i] = s.left + slots
			}
			c.publish += c.cfg.Refresh
			c.place(t)
		default:
			c.queue = append(c.queue, c.arrival[c.next])
			c.next++
			c.place(t)
		}
	}
	return nil
}

// busy reports whether an agent is still to arrive, waiting at the
// cluster or unfinished on a node.
func (c *cluster) busy() bool {
	if c.next < len(c.arrival) || len(c.queue) > 0 {
		return true
	}
	for _, s := range c.nodes {
		if s.left > 0 {
			return true
		}
	}
	return false
}

// earliest is the node with the earliest next event and its time (-1 and
// past the horizon when none has one).
func (c *cluster) earliest() (int, time.Duration) {
	n, tn := -1, c.horizon+1
	for i, s := range c.nodes {
		if t, ok := s.next(); ok && t < tn {
			n, tn = i, t
		}
	}
	return n, tn
}

// place places the agents waiting at the cluster at time t, in arrival
// order, while a node has room (allocatable less the agents placed there
// and not done): each on the node with the largest fraction of its
// allocatable left (Kubernetes' default scoring, least allocated), the
// lowest index on ties.
func (c *cluster) place(t time.Duration) {
	wfs := c.nodes[0].cfg.Workflows
	for len(c.queue) > 0 {
		best, score := -1, 0.0
		for i, s := range c.nodes {
			if r := c.alloc[i] - s.left; r > 0 && float64(r)/float64(c.alloc[i]) > score {
				best, score = i, float64(r)/float64(c.alloc[i])
			}
		}
		if best < 0 {
			return
		}
		w := c.queue[0]
		c.queue = c.queue[1:]
		s := c.nodes[best]
		s.now = max(s.now, t)
		if err := s.add(&wfs[w], t); err != nil {
			panic(fmt.Sprintf("sim: placing %s: %v", wfs[w].ID, err)) // ids were checked unique
		}
		c.placed[w] = best
	}
}

// stall ends the run at the horizon: every node fails what it has not
// finished, and the agents never placed count as stalled.
func (c *cluster) stall() {
	for _, s := range c.nodes {
		s.stall()
	}
}

// result gathers every node's and agent's fate.
func (c *cluster) result(wall time.Duration) *ClusterResult {
	wfs := c.nodes[0].cfg.Workflows
	res := &ClusterResult{Placement: c.cfg.Placement, Wall: wall}
	byID := map[string]WorkflowResult{}
	for _, s := range c.nodes {
		r := s.result()
		res.Nodes = append(res.Nodes, r)
		for _, w := range r.Workflows {
			byID[w.ID] = w
		}
	}
	for i := range wfs {
		a := ClusterAgent{Node: c.placed[i], Arrival: secs(wfs[i].Arrival)}
		if a.Node >= 0 {
			a.WorkflowResult = byID[wfs[i].ID]
		} else {
			a.WorkflowResult = WorkflowResult{ID: wfs[i].ID, Submit: c.horizon, End: c.horizon, Started: -1}
		}
		a.Latency = a.End - a.Arrival
		res.Agents = append(res.Agents, a)
	}
	return res
}
