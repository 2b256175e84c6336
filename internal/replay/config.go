package replay

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/tenon-dev/tenon/internal/clock"
	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/memtool"
	"github.com/tenon-dev/tenon/internal/sandbox"
	"github.com/tenon-dev/tenon/internal/trajectory"
)

// Defaults.
const (
	DefaultRetries        = 5 // retries after the first attempt (seed 000 §5.1)
	DefaultSampleInterval = 100 * time.Millisecond
	DefaultToolPath       = "/usr/local/bin/tenon" // the tenon binary inside a sandbox
	DefaultSandboxPrefix  = "replay"
)

// Config is one replay run.
type Config struct {
	Workflows []trajectory.Workflow
	Backend   sandbox.Backend
	Policy    controller.Policy
	Budget    int64             // domain memory budget in bytes, for policies and reports
	Domain    controller.Domain // observed domain; nil records no memory

	// TimeScale multiplies model waits, arrival offsets and Mem profile
	// times; 0 means 1 (real time). E.g. 0.1 replays ten times faster.
	TimeScale float64
	// MaxRetries is how many times a failed workflow is re-enqueued after its
	// first attempt; 0 means DefaultRetries, negative means none.
	MaxRetries int
	// ActionTimeout kills an action that runs longer (a sandbox timeout,
	// which fails the attempt); 0 means none.
	ActionTimeout time.Duration

	// MemArgs builds the argv after ToolPath ("tool", "mem", flags...) for
	// a (scaled) profile; nil means memtool.Args.
	MemArgs func(trajectory.MemProfile) []string
	// ToolPath is the tenon binary inside the sandbox; "" means DefaultToolPath.
	ToolPath string

	// SandboxPrefix starts every sandbox id; "" means DefaultSandboxPrefix.
	SandboxPrefix string
	// WorkspaceRoot, when set, holds one fresh workspace directory per
	// attempt, removed when the attempt ends; "" leaves it to the backend.
	WorkspaceRoot string

	// EventLog receives one JSON event per line; nil discards them.
	EventLog io.Writer
	// Progress is called with (workflows finished, total) at the start and
	// after each workflow ends; it may be nil. Calls are serialized.
	Progress func(done, total int)
	// SampleInterval is the sampler period; 0 means DefaultSampleInterval.
	SampleInterval time.Duration

	Logger *slog.Logger // nil means discard
	Clock  clock.Clock  // nil means the wall clock
}

// withDefaults validates c and fills in defaults.
func (c Config) withDefaults() (Config, error) {
	if c.Backend == nil {
		return c, fmt.Errorf("%w: Backend is nil", ErrConfig)
	}
	if c.Policy == nil {
		return c, fmt.Errorf("%w: Policy is nil", ErrConfig)
	}
	if c.TimeScale < 0 {
		return c, fmt.Errorf("%w: TimeScale %g must be >= 0", ErrConfig, c.TimeScale)
	}
	if c.TimeScale == 0 {
		c.TimeScale = 1
	}
	switch {
	case c.MaxRetries == 0:
		c.MaxRetries = DefaultRetries
	case c.MaxRetries < 0:
		c.MaxRetries = 0
	}
	if c.WorkspaceRoot != "" {
		abs, err := filepath.Abs(c.WorkspaceRoot)
		if err != nil {
			return c, fmt.Errorf("%w: WorkspaceRoot: %w", ErrConfig, err)
		}
		c.WorkspaceRoot = abs
	}
	if c.MemArgs == nil {
		c.MemArgs = memtool.Args
	}
	if c.ToolPath == "" {
		c.ToolPath = DefaultToolPath
	}
	if c.SandboxPrefix == "" {
		c.SandboxPrefix = DefaultSandboxPrefix
	}
	if c.SampleInterval <= 0 {
		c.SampleInterval = DefaultSampleInterval
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Clock == nil {
		c.Clock = clock.Real{}
	}
	seen := make(map[string]bool, len(c.Workflows))
	for i := range c.Workflows {
		w := &c.Workflows[i]
		if seen[w.ID] {
			return c, fmt.Errorf("%w: workflow id %q appears twice", ErrConfig, w.ID)
		}
		seen[w.ID] = true
		if err := w.Validate(); err != nil {
			return c, fmt.Errorf("%w: workflow %q: %w", ErrConfig, w.ID, err)
		}
		if ws := w.Workspace; ws != nil {
			if c.WorkspaceRoot == "" {
				return c, fmt.Errorf("%w: workflow %q seeds its workspace, which needs a WorkspaceRoot", ErrConfig, w.ID)
			}
			if _, err := os.Stat(ws.Archive); err != nil {
				return c, fmt.Errorf("%w: workflow %q: workspace archive: %w", ErrConfig, w.ID, err)
			}
		}
	}
	return c, nil
}
