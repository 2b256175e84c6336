// Command tenon runs many LLM-agent sandboxes on one host under a memory budget.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/pprof"
	"sort"
	"strings"
	"syscall"
)

// command is one subcommand. Subcommands with children (e.g. "trace import")
// are registered under their full space-separated name.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, env *cliEnv, args []string) error
}

// cliEnv carries what every subcommand needs.
type cliEnv struct {
	stdout, stderr io.Writer
	log            *slog.Logger
}

var commands = map[string]*command{}

func register(c *command) { commands[c.name] = c }

// errUsage marks an error already explained by a usage message.
var errUsage = errors.New("usage")

func main() {
	maybeRunInternal()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	env := &cliEnv{stdout: os.Stdout, stderr: os.Stderr}
	env.log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: logLevel()}))
	stopProfile := startProfile(env)
	err := dispatch(ctx, env, os.Args[1:])
	stopProfile()
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		if !errors.Is(err, errUsage) {
			fmt.Fprintf(os.Stderr, "tenon: %v\n", err)
		}
		os.Exit(1)
	}
}

func logLevel() slog.Level {
	if os.Getenv("TENON_DEBUG") != "" {
		return slog.LevelDebug
	}
	return slog.LevelWarn
}

// startProfile writes a CPU profile of the whole command to the file
// TENON_CPU_PROFILE names (go tool pprof reads it): where a controller's
// own CPU goes, on the host it shares with its sandboxes. It returns the
// function that ends the profile. The variable is removed from the
// environment the command's children inherit.
func startProfile(env *cliEnv) func() {
	path := os.Getenv("TENON_CPU_PROFILE")
	if path == "" {
		return func() {}
	}
	// Not inherited: the processes tenon starts again from its own binary
	// (sandbox inits, memory tools) would write over the same file.
	os.Unsetenv("TENON_CPU_PROFILE")
	f, err := os.Create(path)
	if err == nil {
		err = pprof.StartCPUProfile(f)
		if err != nil {
			f.Close()
		}
	}
	if err != nil {
		fmt.Fprintf(env.stderr, "tenon: TENON_CPU_PROFILE: %v (no profile written)\n", err)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			fmt.Fprintf(env.stderr, "tenon: TENON_CPU_PROFILE: %v\n", err)
		}
	}
}

// dispatch finds the longest registered command name matching the leading args.
func dispatch(ctx context.Context, env *cliEnv, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(env.stdout)
		return nil
	}
	for n := min(len(args), 3); n > 0; n-- {
		if c, ok := commands[strings.Join(args[:n], " ")]; ok {
			return c.run(ctx, env, args[n:])
		}
	}
	// A group name such as "trace" with no subcommand: list its children.
	if group := childrenOf(args[0]); len(group) > 0 {
		fmt.Fprintf(env.stderr, "tenon %s: choose a subcommand:\n", args[0])
		printCommands(env.stderr, group)
		return errUsage
	}
	fmt.Fprintf(env.stderr, "tenon: unknown command %q; run 'tenon --help' for the list\n", args[0])
	return errUsage
}

func childrenOf(prefix string) []*command {
	var out []*command
	for name, c := range commands {
		if strings.HasPrefix(name, prefix+" ") && c.summary != "" {
			out = append(out, c)
		}
	}
	return out
}

func usage(w io.Writer) {
	fmt.Fprint(w, `tenon runs many LLM-agent sandboxes on one host under a memory budget,
admitting actions by predicted memory, reclaiming idle sandboxes and gating
fast-growing ones so that nothing is OOM-killed and no work is lost.

Usage: tenon <command> [flags]   (tenon <command> --help for its flags)

Commands:
`)
	all := make([]*command, 0, len(commands))
	for _, c := range commands {
		if c.summary != "" {
			all = append(all, c)
		}
	}
	printCommands(w, all)
	fmt.Fprint(w, "\nMost commands need root (cgroups, namespaces). Set TENON_DEBUG=1 for debug logs,\n"+
		"TENON_CPU_PROFILE=FILE for a CPU profile of the command (go tool pprof FILE).\n")
}

func printCommands(w io.Writer, cs []*command) {
	sort.Slice(cs, func(i, j int) bool { return cs[i].name < cs[j].name })
	width := 0
	for _, c := range cs {
		width = max(width, len(c.name))
	}
	for _, c := range cs {
		fmt.Fprintf(w, "  %-*s  %s\n", width, c.name, c.summary)
	}
}

// newFlags returns a flag set whose --help prints the command's summary,
// its usage line and flags.
func newFlags(env *cliEnv, name, argsUsage, summary, details string) *flag.FlagSet {
	fs := flag.NewFlagSet("tenon "+name, flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	fs.Usage = func() {
		out := fs.Output()
		fmt.Fprintf(out, "%s\n\nUsage: tenon %s [flags] %s\n", summary, name, argsUsage)
		if details != "" {
			fmt.Fprintf(out, "\n%s\n", strings.TrimSpace(details))
		}
		fmt.Fprint(out, "\nFlags:\n")
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses the flags of a command that takes no arguments: flags
// may come in any order, and any argument left over is a usage error
// (rather than a flag silently ignored after it).
func parseFlags(env *cliEnv, fs *flag.FlagSet, args []string) error {
	if err := parseFlagsArgs(env, fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		fmt.Fprintf(env.stderr, "%s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		return errUsage
	}
	return nil
}

// parseFlagsArgs parses args, flags and positional arguments interleaved:
// Go's flag package stops at the first argument, so parsing resumes after
// each one and flags after an argument count ("DIR -o FILE" is "-o FILE
// DIR"). A "--" ends the flags; everything after it is an argument. The
// arguments are then fs.Args(), in order. -h (before any "--") prints the
// usage on stdout and returns flag.ErrHelp.
func parseFlagsArgs(env *cliEnv, fs *flag.FlagSet, args []string) error {
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "-h" || a == "--help" || a == "-help" {
			fs.SetOutput(env.stdout)
			fs.Usage()
			return flag.ErrHelp
		}
	}
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return errUsage
		}
		rest := fs.Args()
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			pos = append(pos, rest...) // fs.Parse stopped at "--"
			break
		}
		if len(rest) == 0 {
			break
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
	// Leave the arguments in fs.Args(): after "--" the flag package takes
	// everything as an argument.
	if err := fs.Parse(append([]string{"--"}, pos...)); err != nil {
		return errUsage
	}
	return nil
}
