package main

import (
	"context"
	"fmt"
	"io"

	"github.com/tenon-dev/tenon/internal/app"
	"github.com/tenon-dev/tenon/internal/realtools"
	"github.com/tenon-dev/tenon/internal/trajectory"
)

func init() {
	register(&command{name: "workload real", summary: "real tool calls on real repositories: replay recorded tasks' own edits and commands", run: runWorkloadReal})
}

func runWorkloadReal(_ context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "workload real", "",
		"Build workflows that replay recorded agent tasks' own tool calls on the repositories they worked on.",
		`Each repository of DIR/manifest.json (an archive NAME.tar.gz at the task's
commit) becomes one workflow: its workspace is the archive, unpacked afresh for
every attempt and shown at /testbed; the manifest's setup runs first; the
task's Edit and Write calls are applied by `+"`tenon tool edit`"+` (refused ones
skipped); the Bash calls of its run list run for real under bash -c with the
manifest's substitutions and env and the agent's 120 s limit; every other call
is skipped and its time added to the next model wait. The file names the
archives by absolute path: replay it on the machine that holds them, as root,
on the process or docker backend, with the manifest's Debian packages installed
(on the host, or in the image --image names: tenon image build --manifest
DIR/manifest.json builds one).`)
	repos := fs.String("repos", "../shared/repos", "`directory` of the repositories: manifest.json, NAME.tar.gz, pylib/")
	traces := fs.String("traces", "../shared/traces/agentcgroup-haiku", "`directory` of the AgentCgroup trace runs (<task>/attempt_1/)")
	out := fs.String("o", "-", "output trajectory file (JSONL); - for stdout")
	image := fs.String("image", "", "the workflows' base `image` (default: the backend's, the host's root on the process backend)")
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	wfs, _, err := realtools.Build(*repos, *traces)
	if err != nil {
		return err
	}
	if *image != "" {
		wfs, _ = app.OverrideImage(wfs, *image)
	}
	if err := writeOutput(env, *out, func(w io.Writer) error { return trajectory.Write(w, wfs) }); err != nil {
		return err
	}
	if *out != "-" {
		fmt.Fprintf(env.stderr, "wrote %d workflows to %s\n", len(wfs), *out)
	}
	return nil
}
