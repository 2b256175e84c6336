package main

import (
	"context"
	"fmt"
	"io"

	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/trajectory/agentcgroup"
)

func init() {
	register(&command{name: "trace import agentcgroup", summary: "convert AgentCgroup trace runs into a trajectory file", run: runTraceImport})
	register(&command{name: "trace import", run: func(_ context.Context, env *cliEnv, args []string) error {
		fmt.Fprintln(env.stderr, "tenon trace import: name the trace layout, e.g. 'tenon trace import agentcgroup DIR'")
		return errUsage
	}})
}

func runTraceImport(_ context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "trace import agentcgroup", "DIR",
		"Convert AgentCgroup trace runs (DIR/<task>/attempt_N/{resources,tool_calls}.json) into a trajectory file.",
		`One workflow per run with tool calls. Per call: duration, memory relative to the level just
before it (samples widened to the nearest on each side), the model wait as the gap to the
previous call, and a mem profile that reproduces it. Damaged runs never stop the import: a summary
on stderr lists skipped runs with the reason and counts warnings by kind (ends inferred for the
older layout without end_timestamp, missing commands, unknown tools, dropped samples).`)
	out := fs.String("o", "-", "output trajectory file (JSONL); - for stdout")
	if err := parseFlagsArgs(env, fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(env.stderr, "tenon trace import agentcgroup: want exactly one trace directory")
		return errUsage
	}
	wfs, rep, err := agentcgroup.Import(fs.Arg(0))
	if err != nil {
		return err
	}
	if err := writeOutput(env, *out, func(w io.Writer) error { return trajectory.Write(w, wfs) }); err != nil {
		return err
	}
	return rep.Print(env.stderr)
}
