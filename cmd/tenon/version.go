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
	if bi, ok := debug.ReadBuildInfo(); ok {
		r, modified, ok := app.BuildVCS()
		fmt.Fprintf(env.stdout, "tenon %s (%s, %s)\n", bi.Main.Version, commitLine(r, modified, ok), bi.GoVersion)
		return nil
	}
	fmt.Fprintln(env.stdout, "tenon (no build information)")
	return nil
}

// commitLine says which commit a binary was built from (BuildVCS's
// values), with uncommitted changes, or why it does not know.
func commitLine(rev string, modified, ok bool) string {
	switch {
	case !ok:
		return "commit unknown: built without VCS stamping, by -buildvcs=false, which GOFLAGS may set, or outside a checkout; go build -buildvcs=true names it"
	case modified:
		return "commit " + rev + " with uncommitted changes"
	}
	return "commit " + rev
}
