package main

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/tenon-dev/tenon/internal/app"
)

func init() {
	register(&command{name: "version", summary: "print the tenon version and build information", run: runVersion})
}

func runVersion(_ context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "version", "", "Print the tenon version and build information.", "")
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	rev := "unknown"
	if r, _, ok := app.BuildVCS(); ok {
		rev = r
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		fmt.Fprintf(env.stdout, "tenon %s (commit %s, %s)\n", bi.Main.Version, rev, bi.GoVersion)
		return nil
	}
	fmt.Fprintln(env.stdout, "tenon (no build information)")
	return nil
}
