package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/tenon-dev/tenon/internal/app"
	"github.com/tenon-dev/tenon/internal/sim"
	"github.com/tenon-dev/tenon/internal/units"
)

func init() {
	register(&command{name: "sim cluster", summary: "simulate a cluster of tenon hosts behind a scheduler placing agents by published headroom or by static requests", run: runSimCluster})
}

func runSimCluster(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "sim cluster", "",
		"Simulate --nodes identical hosts behind a cluster scheduler, each host running a node policy as tenon sim does.",
		`Agents arrive at the cluster at their workload arrival times and the scheduler
places each on one node, as Kubernetes' default scheduler places pods: on a node
whose allocatable less what its agents request fits one more, the one with the
largest fraction of its allocatable left (least allocated; the lowest node on
ties). An agent that fits no node waits at the cluster, first come first
placed. Once placed an agent stays on its node (its retries run there).
Placements:

  headroom  every --refresh each node publishes its agent slots (how many more
            agents its agent pacing would start: floors, predicted first peak,
            agent reserve, every started agent charged at least the predicted
            floor; what tenon status shows as agent_slots and a node
            agent publishes as tenon.dev/agent-slots); each agent requests one
            slot. Only for node policies with agent pacing (tenon, admission).
  requests  each agent requests --request of memory; a node's allocatable is its
            budget. The node then runs its policy on whatever it was given.

Every placement runs with every --policy (default tenon and eager), so that the
comparison separates placement from the node policy. Latency (P50, P95,
makespan) counts from the arrival at the cluster; the queue columns are the wait
to be placed, node wait the wait on the node from placement to the agent's
start (its agent pacing or agent-level limit). The lower bound is the
workload's on one host of all the nodes' memory.`)
	file := fs.String("workload", "", "trajectory file (JSONL), e.g. from tenon trace import and tenon trace replicate (required)")
	agents := fs.Int("agents", 0, "use the file's first N workflows (0: all)")
	nodes := fs.Int("nodes", 10, "nodes in the cluster")
	budget := units.Size(2 << 30)
	fs.Var(&budget, "budget", "every node's workload domain budget, e.g. 2GiB")
	placements := newListFlag(sim.PlaceHeadroom, sim.PlaceRequests)
	fs.Var(placements, "placement", "placement rules to run: headroom, requests (comma list)")
	policies := newListFlag("tenon", "eager")
	fs.Var(policies, "policy", "node policies to run (comma list; headroom runs only those with agent pacing)")
	refresh := fs.Duration("refresh", sim.DefaultRefresh, "headroom: how often nodes publish their slots")
	request := fs.String("request", "p95", "requests: every agent's memory request, pNN (that percentile of the agents' profiled peaks) or a size such as 512MiB")
	pageOut := fs.Bool("page-out", true, "nodes have compressed swap (zram): residency may page idle sandboxes out")
	var timeout timeoutFlag
	fs.Var(&timeout, "action-timeout", actionTimeoutHelp+" (simulated time)")
	seed := fs.Int64("seed", 1, "seed of the predictors' split")
	train := fs.String("train", "auto", "predictor training: live, sampled (at most 200 workflows per fold), auto (live up to 1000 workflows)")
	params := paramFlag{}
	fs.Var(params, "param", "node policy parameter key=value, repeatable, as tenon sim")
	jsonOut := fs.Bool("json", false, "print JSON instead of a table")
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	if *file == "" {
		fmt.Fprintln(env.stderr, "tenon sim cluster: --workload is required (tenon trace import, then tenon trace replicate)")
		return errUsage
	}
	res, err := app.SimulateCluster(ctx, app.ClusterConfig{
		WorkloadFile: *file, Agents: *agents, Nodes: *nodes, Budget: int64(budget),
		Placements: placements.items, Policies: policies.items, Refresh: *refresh, Request: *request,
		Params: params, Swap: sim.Swap{Off: !*pageOut}, ActionTimeout: timeout.config(), Seed: *seed, Train: *train, Log: env.log,
	})
	if err != nil {
		return err
	}
	if *jsonOut {
		enc := json.NewEncoder(env.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	return writeCluster(env.stdout, res)
}

// writeCluster prints the cluster runs as an aligned table.
func writeCluster(w io.Writer, r *app.ClusterResult) error {
	fmt.Fprintf(w, "%d nodes × %s   %d agents   oversubscription %.2fx   lower bound %.1f s   refresh %.0f s   request %s = %s\n\n",
		r.Nodes, units.FormatSize(r.NodeBudget), r.Agents, r.Oversubscription, r.LowerBoundS, r.RefreshS,
		r.Request, units.FormatSize(r.RequestBytes))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "placement\tnode policy\tOOM\tdone\tmakespan\t/ bound\tP50\tP95\tqueue P50\tqueue P95\tqueue max\tnode wait P95\tagents/node\twall\t")
	for _, run := range r.Runs {
		m := run.Metrics
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d/%d\t%s\t%s\t%s\t%s\t%.1f s\t%.1f s\t%.1f s\t%.1f s\t%d-%d\t%.1f s\t\n",
			run.Placement, run.Policy, m.OOMEvents, m.Completed, m.Workflows-m.Infeasible, m.MakespanS,
			overBound(m.MakespanS.Finite(), float64(m.MakespanS), r.LowerBoundS), m.P50S, m.P95S,
			run.QueueP50S, run.QueueP95S, run.QueueMaxS, run.NodeWaitP95S, run.NodeAgentsMin, run.NodeAgentsMax, run.WallS)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "\n(done: completed of the agents that fit a node; makespan and percentiles from the arrival at the cluster,\n dnf when an agent did not finish; queue: waiting to be placed; node wait: from placement to the agent's start)")
	return err
}

// overBound is makespan / lower bound, "-" when either is unknown.
func overBound(finite bool, makespan, bound float64) string {
	if !finite || bound <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", makespan/bound)
}
