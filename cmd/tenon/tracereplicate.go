package main

import (
	"context"
	"fmt"
	"io"

	"github.com/tenon-dev/tenon/internal/bench"
	"github.com/tenon-dev/tenon/internal/trajectory"
)

func init() {
	register(&command{name: "trace replicate", summary: "copy a trajectory file's workflows for measurement, as the bench's traces group does", run: runTraceReplicate})
}

func runTraceReplicate(_ context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "trace replicate", "FILE",
		"Write --copies copies of every workflow of the trajectory FILE, as tenon bench's traces group replays them.",
		`Copy rep (from 0) of the workflow at index i gets the id "<id>-r<rep>" and arrives at
i x --spacing + rep x --offset seconds; its image is dropped, so that it runs in the
backend's default image (the process backend's host root). --shuffle N first puts the
workflows in an order drawn from N (the same order for every copy), to measure how much
a result depends on the order in which agents arrive.`)
	copies := fs.Int("copies", bench.TraceCopies, "copies of every workflow")
	spacing := fs.Float64("spacing", trajectory.ReplicaSpacingS, "seconds between the arrivals of consecutive workflows of a copy")
	offset := fs.Float64("offset", trajectory.ReplicaOffsetS, "seconds between the arrivals of consecutive copies")
	shuffle := fs.Uint64("shuffle", 0, "put the workflows in an order drawn from this seed before replicating (0: the file's order)")
	out := fs.String("o", "-", "output trajectory file (JSONL); - for stdout")
	if err := parseFlagsArgs(env, fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(env.stderr, "tenon trace replicate: want exactly one trajectory file")
		return errUsage
	}
	wfs, err := trajectory.LoadFile(fs.Arg(0))
	if err != nil {
		return err
	}
	reps, err := trajectory.Replicate(trajectory.Shuffled(wfs, *shuffle), *copies, *spacing, *offset)
	if err != nil {
		return fmt.Errorf("--copies %d --spacing %g --offset %g: %w", *copies, *spacing, *offset, err)
	}
	return writeOutput(env, *out, func(w io.Writer) error { return trajectory.Write(w, reps) })
}
