package api

import (
	"errors"
	"log/slog"
	"time"

	"github.com/tenon-dev/tenon/internal/clock"
	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/sandbox"
)

// Config configures a Server.
type Config struct {
	// StateDir holds the registry (agents.db) and the workspaces
	// (workspaces/<agent id>). Required; created if missing.
	StateDir string
	// Backend runs the sandboxes. Required.
	Backend sandbox.Backend
	// Policy decides when agents and actions run. Required; the server
	// calls Start in New and Stop in Shutdown.
	Policy controller.Policy
	// Budget is the workload domain's memory budget in bytes.
	Budget int64
	// Domain observes the workload domain; nil uses the backend when it
	// implements controller.Domain (the fake does), else no observations.
	Domain controller.Domain
	// Clock defaults to the wall clock.
	Clock clock.Clock
	// Logger nil discards.
	Logger *slog.Logger
	// Token is the bearer token TCP listeners require; unix sockets are
	// protected by their file mode instead.
	Token string
	// Upstream is the base URL of an OpenAI-compatible API (e.g.
	// "http://127.0.0.1:8000/v1"); "" disables the model-call proxy.
	Upstream string
	// UpstreamKey, when set, replaces the Authorization header sent upstream.
	UpstreamKey string
	// ExecTimeout is the action timeout when a request gives none; 0 means 10 min.
	ExecTimeout time.Duration
	// MaxBodyBytes caps request bodies; 0 means 64 MiB.
	MaxBodyBytes int64
	// BodyMemory bounds the memory the large JSON bodies in flight may
	// take together (twice each body's length; bodies.go); 0 means
	// DefaultBodyMemory. It is raised to twice MaxBodyBytes if below.
	BodyMemory int64
	// OutputLimit caps each of stdout and stderr; 0 means 1 MiB.
	OutputLimit int
	// IdleAfter is how long an agent with no action and no announced wait
	// stays "idle" before it is reported in a model wait; 0 means 2 s.
	IdleAfter time.Duration
	// QueueTimeout bounds how long an action waits for its agent's
	// admission slot and its own admission before it fails with 503
	// (*QueueTimeoutError); 0 means DefaultQueueTimeout.
	QueueTimeout time.Duration
	// SlotIdle is how long an agent holds its admission slot with nothing
	// running before it gives it back to an agent that waits for one; 0
	// means DefaultSlotIdle.
	SlotIdle time.Duration
	// WorkspaceMax caps each agent's workspace, in bytes: the workspace is
	// a sparse ext4 image of this size (workspaces/<id>.img) loop-mounted
	// on workspaces/<id> (internal/disk), so writes past it fail with
	// ENOSPC and the action's response says disk_full. 0 means no limit;
	// New turns it off when the policy brings a sandbox manager that moves
	// workspace directories (a mount point refuses that), that is one
	// without KeepsWorkspaces() true (managed.Config.KeepWorkspaces).
	WorkspaceMax int64
}

// Defaults of Config's admission deadlines.
const (
	DefaultQueueTimeout = 5 * time.Minute
	DefaultSlotIdle     = 30 * time.Second
)

// DefaultBodyMemory is Config.BodyMemory when 0.
const DefaultBodyMemory = 256 << 20

func (c *Config) fill() error {
	if c.StateDir == "" {
		return errors.New("api: Config.StateDir is required")
	}
	if c.Backend == nil {
		return errors.New("api: Config.Backend is required")
	}
	if c.Policy == nil {
		return errors.New("api: Config.Policy is required")
	}
	if c.Domain == nil {
		if d, ok := c.Backend.(controller.Domain); ok {
			c.Domain = d
		}
	}
	if c.Clock == nil {
		c.Clock = clock.Real{}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.ExecTimeout <= 0 {
		c.ExecTimeout = 10 * time.Minute
	}
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = 64 << 20
	}
	if c.BodyMemory <= 0 {
		c.BodyMemory = DefaultBodyMemory
	}
	c.BodyMemory = max(c.BodyMemory, 2*c.MaxBodyBytes)
	if c.OutputLimit <= 0 {
		c.OutputLimit = 1 << 20
	}
	if c.IdleAfter <= 0 {
		c.IdleAfter = 2 * time.Second
	}
	if c.QueueTimeout <= 0 {
		c.QueueTimeout = DefaultQueueTimeout
	}
	if c.SlotIdle <= 0 {
		c.SlotIdle = DefaultSlotIdle
	}
	return nil
}
