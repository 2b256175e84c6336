package main

import (
	"context"
	"fmt"

	"github.com/tenon-dev/tenon/internal/edittool"
	"github.com/tenon-dev/tenon/internal/trajectory"
)

func init() {
	register(&command{name: "tool edit", summary: "replay tool: apply a recorded file edit (Edit or Write) in the working directory", run: runToolEdit})
}

func runToolEdit(_ context.Context, env *cliEnv, args []string) error {
	var e trajectory.FileEdit
	fs := edittool.NewFlagSet("tenon tool edit", &e)
	fs.SetOutput(env.stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Apply a recorded agent's file edit to a file under the working directory.

Usage: tenon tool edit --path FILE (--old TEXT --new TEXT [--replace-all] | --new TEXT --write)

--old is replaced by --new (once: it must occur exactly once, unless
--replace-all); with --write the file is created or replaced by --new. FILE
is relative and may not leave the working directory. Replays run it inside
sandboxes, where tenon is mounted at /usr/local/bin/tenon.

Flags:
`)
		fs.PrintDefaults()
	}
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	return edittool.Apply(".", e)
}
