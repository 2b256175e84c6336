package main

import (
	"context"
	"fmt"
	"runtime/debug"
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
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				rev = s.Value
			}
		}
		fmt.Fprintf(env.stdout, "tenon %s (commit %s, %s)\n", bi.Main.Version, rev, bi.GoVersion)
		return nil
	}
	fmt.Fprintln(env.stdout, "tenon (no build information)")
	return nil
}
