package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/tenon-dev/tenon/internal/report"
	"github.com/tenon-dev/tenon/internal/trajectory"
)

func init() {
	register(&command{name: "events delays", summary: "where each policy's workflow time went in a replay: start, create, admission, actions, between actions, lost attempts", run: runEventsDelays})
}

func runEventsDelays(_ context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "events delays", "EVENTS.jsonl",
		"Split the workflow latencies of a replay's event log into the phases that took them, per policy.",
		`EVENTS.jsonl is an event log of tenon replay --events or tenon bench --events-dir. Every
column is seconds summed over the workflows that ended: latency (submit to the end of the
last attempt); start (submit to the first agent start: agent pacing or a policy's arrival
queue); create (agent start to its sandbox up); admission waits of light and of heavy
actions (how many were heavy); actions (action start to done); between (an action's end
to the next one's enqueue); lost (attempts that did not complete: OOM kills, timeouts,
preemptions); other (what no event marks, e.g. a retry's wait). The phases count the
completed attempts. With --workload, the trajectory file the run replayed (for tenon
bench's traces group: tenon trace import, then tenon trace replicate), between is split
into the model waits the trajectory records (times the run's time scale) and resume:
the rest, e.g. a reclaimed sandbox being brought back.`)
	workload := fs.String("workload", "", "the trajectory file the run replayed (splits between into model wait and resume)")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	if err := parseFlagsArgs(env, fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(env.stderr, "tenon events delays: want exactly one event log")
		return errUsage
	}
	var wfs []trajectory.Workflow
	if *workload != "" {
		var err error
		if wfs, err = trajectory.LoadFile(*workload); err != nil {
			return err
		}
	}
	f, err := os.Open(fs.Arg(0))
	if err != nil {
		return err
	}
	defer f.Close()
	ds, err := report.ReadDelays(f, wfs)
	if err != nil {
		return fmt.Errorf("%s: %w", fs.Arg(0), err)
	}
	if *asJSON {
		enc := json.NewEncoder(env.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(ds)
	}
	return report.WriteDelays(env.stdout, ds)
}
