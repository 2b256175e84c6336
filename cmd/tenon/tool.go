package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/tenon-dev/tenon/internal/memtool"
)

func init() {
	register(&command{name: "tool mem", summary: "synthetic tool: reproduce a memory curve (ramp, hold, retain) with real resident pages", run: runToolMem})
}

func runToolMem(ctx context.Context, env *cliEnv, args []string) error {
	var o memtool.Options
	fs := memtool.NewFlagSet("tenon tool mem", &o)
	fs.SetOutput(env.stderr)
	fs.Usage = func() {
		out := fs.Output()
		fmt.Fprint(out, `Reproduce a memory curve with real resident memory (every page touched).

Usage: tenon tool mem [flags]

Ramps to --peak over --ramp, holds it for --hold, drops to --retain which stays
until exit (or for --retain-for), optionally writes --files MiB into --files-dir
and leaves a background process holding --retain after exit (--background).
It runs inside sandboxes, where tenon is mounted at /usr/local/bin/tenon.

Flags:
`)
		fs.PrintDefaults()
	}
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	if err := memtool.Validate(o.Profile); err != nil {
		return err
	}
	o.Out = env.stdout
	err := memtool.Run(ctx, o)
	if errors.Is(err, memtool.ErrInterrupted) {
		return err
	}
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	return err
}
