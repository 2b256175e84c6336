package scope

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/tenon-dev/tenon/internal/cgroup"
)

// Request is one tool invocation.
type Request struct {
	// Argv is the command; a shell command is ["/bin/sh", "-c", TEXT].
	Argv []string
	// Dir is the working directory ("" for the runner's).
	Dir string
	// Env is the environment (nil for the runner's).
	Env []string
	// Stdin feeds the tool (nil for /dev/null).
	Stdin io.Reader
	// OutputCap is the number of bytes kept per stream (DefaultOutputCap when 0).
	OutputCap int
	// NoFastPath runs the tool in a scope even when it is Trivial.
	NoFastPath bool
}

// Result is what a tool invocation returns.
type Result struct {
	ExitCode int // the exit status; -1 when the main process was killed by a signal
	Stdout   []byte
	Stderr   []byte
	// StdoutDropped and StderrDropped count the bytes beyond OutputCap.
	StdoutDropped, StderrDropped int64
	// Scoped is false when the invocation took the fast path.
	Scoped bool
	// Scope is the path of the scope group (relative to the hierarchy roots).
	Scope string
	// Peak is the scope's peak memory; Held what it still held after the
	// process tree exited; Left what remained after the drop and went to
	// the parent when the group was removed. Zero when not Scoped.
	Peak, Held, Left int64
	// Duration runs from the start to the exit of the main process.
	Duration time.Duration
	// Drop is how long emptying and removing the scope took.
	Drop time.Duration
}

// Runner runs tool invocations in scopes under parent groups of one layout.
type Runner struct {
	Layout *cgroup.Layout
	Log    *slog.Logger
	// Shell is the gate trampoline's interpreter on v1 and hybrid hosts
	// ("/bin/sh" when empty).
	Shell string
	// KillTimeout bounds killing what is left in a scope (5 s when 0).
	KillTimeout time.Duration
	// OutputGrace is how long output is still read after the tree was
	// killed (1 s when 0); a process that escaped the scope and holds the
	// pipes cannot keep the invocation from returning.
	OutputGrace time.Duration

	seq atomic.Int64
}

// NewRunner returns a runner for layout.
func NewRunner(layout *cgroup.Layout, log *slog.Logger) *Runner {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Runner{Layout: layout, Log: log}
}

func (r *Runner) shell() string {
	if r.Shell == "" {
		return "/bin/sh"
	}
	return r.Shell
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// sizeIn resolves relative names against dir for Trivial's cat check.
func sizeIn(dir string) SizeFunc {
	return func(name string) (int64, error) {
		if !filepath.IsAbs(name) && dir != "" {
			name = filepath.Join(dir, name)
		}
		fi, err := os.Stat(name)
		if err != nil {
			return 0, err
		}
		if !fi.Mode().IsRegular() {
			return 0, fmt.Errorf("%s is not a regular file", name)
		}
		return fi.Size(), nil
	}
}

// RunScoped runs req in a fresh child group of parent (a group path
// relative to the hierarchy roots, which must exist) and returns once the
// tool's process tree has exited, its output has been read and the scope
// has been emptied and removed. Trivial commands run without a scope unless
// req.NoFastPath. When ctx ends first, the tree is killed and the error
// wraps ctx.Err(); the Result still carries what was collected.
func (r *Runner) RunScoped(ctx context.Context, parent string, req Request) (Result, error) {
	if len(req.Argv) == 0 {
		return Result{}, ErrEmptyCommand
	}
	if !req.NoFastPath && Trivial(req.Argv, sizeIn(req.Dir)) {
		return r.runDirect(ctx, req)
	}
	if _, err := cgroup.Open(r.Layout, parent); err != nil {
		return Result{}, fmt.Errorf("opening parent of scope: %w", err)
	}
	name := fmt.Sprintf("tool-%d-%d", os.Getpid(), r.seq.Add(1))
	return r.runInScope(ctx, parent+"/"+name, req)
}
