package app

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tenon-dev/tenon/internal/replay"
	"github.com/tenon-dev/tenon/internal/report"
	"github.com/tenon-dev/tenon/internal/sim"
	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/units"
)

// ClusterConfig is a simulated cluster under each placement rule and node
// policy (sim.RunCluster), on the same workload.
type ClusterConfig struct {
	// Workflows, when set, are the workload; otherwise WorkloadFile.
	Workflows    []trajectory.Workflow
	WorkloadFile string
	Agents       int // the first Agents workflows (0: all)

	Nodes  int
	Budget int64 // every node's
	// Placements (sim.PlaceHeadroom, sim.PlaceRequests) and node Policies:
	// every pair runs but headroom under a policy without agent pacing,
	// which publishes no slots.
	Placements, Policies []string
	Refresh              time.Duration
	// Request is the per-agent memory request of placement by requests:
	// "pNN", that percentile of the agents' profiled peaks
	// (trajectory.Workflow.ProfiledPeakMiB), or a size ("512MiB").
	Request string

	Params map[string]string
	Swap   sim.Swap
	// ActionTimeout as SimConfig's (0: the live replay's default).
	ActionTimeout time.Duration
	Seed          int64
	Train         string
	Log           *slog.Logger
}

// ClusterRun is one placement and node policy's result.
type ClusterRun struct {
	Placement    string         `json:"placement"`
	Policy       string         `json:"node_policy"`
	RequestBytes int64          `json:"request_bytes,omitempty"`
	Metrics      report.Metrics `json:"metrics"` // latency from arrival at the cluster
	// Cluster queue: how long agents waited to be placed, seconds.
	QueueP50S float64 `json:"queue_p50_s"`
	QueueP95S float64 `json:"queue_p95_s"`
	QueueMaxS float64 `json:"queue_max_s"`
	// NodeWaitP95S is the 95th percentile of the wait on the node, from
	// placement to the start of the agent's first attempt (its node's
	// agent pacing or agent-level limit), seconds.
	NodeWaitP95S float64 `json:"node_wait_p95_s"`
	// NodeAgentsMin/Max are the fewest and most agents placed on one node.
	NodeAgentsMin int     `json:"node_agents_min"`
	NodeAgentsMax int     `json:"node_agents_max"`
	WallS         float64 `json:"wall_s"`
}

// ClusterResult is every run of a ClusterConfig.
type ClusterResult struct {
	Nodes            int          `json:"nodes"`
	NodeBudget       int64        `json:"node_budget_bytes"`
	Agents           int          `json:"agents"`
	Oversubscription float64      `json:"oversubscription"` // profiled peaks / the nodes' budgets
	LowerBoundS      float64      `json:"lower_bound_s"`    // the workload's lower bound on one host of every node's budget
	RefreshS         float64      `json:"refresh_s"`
	Request          string       `json:"request"`
	RequestBytes     int64        `json:"request_bytes"`
	Runs             []ClusterRun `json:"runs"`
}

// SimulateCluster runs every placement and node policy of cfg.
func SimulateCluster(ctx context.Context, cfg ClusterConfig) (*ClusterResult, error) {
	log := discardLog(cfg.Log)
	wfs := cfg.Workflows
	if len(wfs) == 0 {
		var err error
		if wfs, err = trajectory.LoadFile(cfg.WorkloadFile); err != nil {
			return nil, err
		}
	}
	if cfg.Agents > 0 {
		if cfg.Agents > len(wfs) {
			return nil, fmt.Errorf("--agents %d: the workload has only %d workflows: replicate it (tenon trace replicate --copies)", cfg.Agents, len(wfs))
		}
		wfs = wfs[:cfg.Agents]
	}
	req, err := parseRequest(cfg.Request, wfs)
	if err != nil {
		return nil, err
	}
	if cfg.Refresh <= 0 {
		cfg.Refresh = sim.DefaultRefresh
	}
	specs, need, err := simPolicies(cfg.Policies)
	if err != nil {
		return nil, err
	}
	preds, err := trainSim(wfs, cfg.Budget, cfg.Seed, cfg.Train, need, log)
	if err != nil {
		return nil, err
	}
	var feasible []trajectory.Workflow
	for _, w := range wfs {
		if w.Feasible(cfg.Budget) == nil {
			feasible = append(feasible, w)
		}
	}
	total := int64(cfg.Nodes) * cfg.Budget
	out := &ClusterResult{Nodes: cfg.Nodes, NodeBudget: cfg.Budget, Agents: len(wfs), RefreshS: cfg.Refresh.Seconds(),
		Oversubscription: trajectory.Oversubscription(wfs, total), LowerBoundS: trajectory.LowerBound(feasible, total),
		Request: cfg.Request, RequestBytes: req}
	for _, pl := range cfg.Placements {
		for _, sp := range specs {
			if pl == sim.PlaceHeadroom && !sp.Admission {
				continue // no agent pacing, no slots to publish
			}
			node := sim.Config{Workflows: wfs, Policy: sp, Budget: cfg.Budget, Retries: sim.DefaultRetries,
				Create: sim.DefaultCreate, Teardown: sim.DefaultTeardown, Rematerialize: sim.DefaultRematerialize,
				Swap: cfg.Swap, ActionTimeout: actionTimeout(cfg.ActionTimeout, wfs, 1), Predictors: preds}
			if err := node.ApplyParams(cfg.Params); err != nil {
				return nil, err
			}
			cc := sim.ClusterConfig{Node: node, Nodes: cfg.Nodes, Placement: pl, Refresh: cfg.Refresh}
			if pl == sim.PlaceRequests {
				cc.Request = req
			}
			r, err := sim.RunCluster(ctx, cc)
			if err != nil {
				return nil, fmt.Errorf("simulating a cluster, placement %s, %s: %w", pl, sp.Name, err)
			}
			run := clusterRun(r, sp.Name, total)
			run.RequestBytes = cc.Request
			log.Info("simulated cluster", "placement", pl, "policy", sp.Name, "wall", r.Wall)
			out.Runs = append(out.Runs, run)
		}
	}
	return out, nil
}

// parseRequest is the per-agent request named by s: "pNN" (a percentile
// of the agents' profiled peaks, report.Percentile) or a size.
func parseRequest(s string, wfs []trajectory.Workflow) (int64, error) {
	if q, ok := strings.CutPrefix(s, "p"); ok {
		p, err := strconv.ParseFloat(q, 64)
		if err != nil || p <= 0 || p > 100 {
			return 0, fmt.Errorf("--request %q: want pNN (a percentile of the agents' profiled peaks, e.g. p95) or a size such as 512MiB", s)
		}
		peaks := make([]float64, 0, len(wfs))
		for _, w := range wfs {
			peaks = append(peaks, w.ProfiledPeakMiB())
		}
		return int64(math.Ceil(report.Percentile(peaks, p) * float64(units.MiB))), nil
	}
	v, err := units.ParseSize(s)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("--request %q: want pNN (e.g. p95) or a size such as 512MiB", s)
	}
	return v, nil
}

// clusterRun summarizes a cluster run as one replay over every node's
// budget (latency from the arrival at the cluster), with the cluster queue.
func clusterRun(r *sim.ClusterResult, policy string, total int64) ClusterRun {
	rr := &replay.Result{Policy: r.Placement + "/" + policy, Budget: total, TimeScale: 1}
	var waits, nodeWaits []float64
	perNode := make([]int, len(r.Nodes))
	for _, a := range r.Agents {
		rr.Workflows = append(rr.Workflows, replay.WorkflowResult{ID: a.ID, Submit: a.Arrival, End: a.End,
			Latency: a.Latency, Attempts: a.Attempts, Completed: a.Completed, Infeasible: a.Infeasible, OOMs: a.OOMs})
		rr.Makespan = max(rr.Makespan, a.End)
		waits = append(waits, a.QueueWait().Seconds())
		if a.Node >= 0 {
			perNode[a.Node]++
		}
		if a.Started >= 0 {
			nodeWaits = append(nodeWaits, (a.Started - a.Submit).Seconds())
		}
	}
	rr.Tally()
	for _, n := range r.Nodes {
		rr.Timeouts += n.Timeouts
		rr.PeakBytes = max(rr.PeakBytes, n.PeakBytes)
	}
	return ClusterRun{Placement: r.Placement, Policy: policy, Metrics: report.Summarize(rr),
		QueueP50S: report.Percentile(waits, 50), QueueP95S: report.Percentile(waits, 95), QueueMaxS: slices.Max(waits),
		NodeWaitP95S:  report.Percentile(nodeWaits, 95),
		NodeAgentsMin: slices.Min(perNode), NodeAgentsMax: slices.Max(perNode), WallS: r.Wall.Seconds()}
}
