package sandbox

import (
	"context"
	"time"
)

// Spec describes a sandbox to create.
type Spec struct {
	ID        string            // unique within the backend; [a-zA-Z0-9_.-]{1,64}
	Image     string            // base image name; "" or "host" is the host base
	Workspace string            // host directory mounted read-write at WorkspaceMount; created if missing
	Env       []string          // KEY=VALUE added to every action
	Network   bool              // give the sandbox a network (default: none)
	Labels    map[string]string // free-form, reported back by Info
	// Binds show more host directories in the sandbox (ValidateBinds).
	Binds []Bind
	// RootfsFrom, when set, is a host directory holding a writable layer
	// captured from an earlier sandbox (what its backend's WritableLayer
	// returned, restored): the new sandbox starts from it instead of an
	// empty layer. The backend moves it into place (rename; a copy when it
	// lies on another file system), so the directory is gone or must be
	// considered consumed after Create. Backends that support it say so
	// with a SupportsRootfsFrom() bool method returning true; callers must
	// check it, since other backends ignore the field.
	RootfsFrom string
}

// Bind shows the host directory Source at Target inside a sandbox.
type Bind struct {
	Source   string // absolute host path of a directory
	Target   string // absolute path in the sandbox
	ReadOnly bool
}

// Capabilities returns the only capabilities a sandbox's root keeps (a
// new slice each call), with no_new_privs: the process backend sets them
// as the bounding, effective and permitted sets, the docker backend drops
// every other one. They are Docker's default set without CAP_MKNOD,
// CAP_DAC_OVERRIDE, CAP_NET_RAW, CAP_SETFCAP and CAP_AUDIT_WRITE. What
// stays is what an agent's tools use as root: chown, fowner and fsetid
// (tar and pip keeping owners, modes and times), setuid and setgid
// (dropping to another user), setpcap, net_bind_service, sys_chroot, and
// kill (killing processes that changed their uid). Gone: reading and
// writing files regardless of their modes (uid 0 owns the sandbox's own
// files, so it needs no override; the host's root-only files stay
// closed), raw and packet sockets (on the host's network with
// Spec.Network they could sniff it), file capabilities (no_new_privs
// ignores them anyway) and the host's audit log.
func Capabilities() []string {
	return []string{
		"CAP_CHOWN", "CAP_FSETID", "CAP_FOWNER",
		"CAP_SETGID", "CAP_SETUID", "CAP_SETPCAP", "CAP_NET_BIND_SERVICE",
		"CAP_SYS_CHROOT", "CAP_KILL",
	}
}

// WorkspaceMount is where the workspace appears inside every sandbox.
const WorkspaceMount = "/workspace"

// ExecRequest is one action: a fresh process tree in the sandbox.
type ExecRequest struct {
	Argv    []string      // program and arguments; run through /bin/sh -c when Shell is set
	Shell   string        // a shell command line (alternative to Argv)
	Cwd     string        // default WorkspaceMount, or the image's WorkingDir where it sets one
	Env     []string      // KEY=VALUE
	Timeout time.Duration // 0 means no timeout
	// OutputLimit caps each of stdout and stderr; 0 means DefaultOutputLimit.
	OutputLimit int
	// Scoped runs the action in its own memory scope (seed 001, "arena T"):
	// a child cgroup of the sandbox's, entered before the action's first
	// instruction and emptied and removed when its process tree exits, so
	// the page cache and memory it leaves behind are dropped at once.
	// Trivial commands (ls, pwd, echo, ...) skip the scope. Backends that
	// cannot scope ignore it.
	Scoped bool
	// Background lets the processes the action leaves running (a server,
	// a daemon started with &) outlive it. Without it, a backend that can
	// (the process and docker backends) kills them when the action's main
	// process exits; a timeout or cancel kills them either way.
	Background bool
}

// DefaultOutputLimit is the per-stream capture cap when ExecRequest.OutputLimit is 0.
const DefaultOutputLimit = 1 << 20

// ExecResult is what an action did.
type ExecResult struct {
	ExitCode        int // -1 when killed by a signal
	Stdout, Stderr  []byte
	StdoutTruncated bool
	StderrTruncated bool
	Duration        time.Duration
	PeakMemory      int64 // peak of the sandbox's memory during the action
	AvgMemory       int64 // time-average of the sandbox's memory during the action (sampled)
	OOMKilled       bool  // a task of the sandbox was OOM-killed during the action
	TimedOut        bool  // the action exceeded its timeout and was killed
	// DiskFull says the sandbox's disk limit was reached when the action
	// ended: a write of the action (or of one before) failed with ENOSPC.
	DiskFull bool
}

// Info describes a live sandbox.
type Info struct {
	ID         string
	CgroupPath string // relative to the hierarchy roots, e.g. "tenon/sb-1"
	InitPid    int    // host pid of the sandbox init
	Labels     map[string]string
	Paused     bool
}

// Stats is a memory reading of a sandbox.
type Stats struct {
	Memory     int64 // usage (+ swap where accounted)
	WorkingSet int64
	Peak       int64
	OOMKills   int64
	CPU        time.Duration
	Procs      int // number of tasks, init included
	// MemStall is the sandbox's accumulated memory stall (cgroup v2
	// memory.pressure "some" total); 0 where the backend cannot tell (v1).
	MemStall time.Duration
	// Blocked is the number of its threads in uninterruptible sleep
	// (state D: cgroup v1's OOM wait, v2's memory.high throttling, disk
	// waits); 0 when Frozen (a frozen thread reports D too); -1 where the
	// backend cannot tell.
	Blocked int
	// Frozen reports whether its cgroup is frozen (paused: by the gate, or
	// paged out by residency), false where it cannot be read.
	Frozen bool
}

// MemoryReader is the optional interface of a backend that reads a
// sandbox's memory (Stats.Memory) alone, cheaper than Stats: the read on
// admission's path, which otherwise reads every Stats field of every
// admitted action's sandbox. Callers check for it with a type assertion.
type MemoryReader interface {
	Memory(ctx context.Context, id string) (int64, error)
}

// Sampler is the optional interface of a backend that reads the Stats
// fields the gate samples every period (Memory, CPU, MemStall, Procs,
// Blocked, Frozen) without the others (WorkingSet, Peak and OOMKills are
// zero), cheaper than Stats: the gate reads every live sandbox each
// period. Blocked, the dearest (every thread's state), is read only with
// threads; without, it is -1 (unknown) unless the sandbox is Frozen.
type Sampler interface {
	Sample(ctx context.Context, id string, threads bool) (Stats, error)
}

// WorkingSetReader is the optional interface of a backend that reads a
// sandbox's working set (Stats.WorkingSet) alone, cheaper than Stats
// (which also lists its processes and reads every thread's state):
// residency's read of each sandbox stalled mid-action, every tick.
type WorkingSetReader interface {
	WorkingSet(ctx context.Context, id string) (int64, error)
}

// ImageResolver is the optional interface of a backend that keeps images
// of its own (the process backend with an image store). ResolveImage
// returns the reference that names an image for good ("" and "host" as
// they are), so that every sandbox of an agent, rematerializations
// included, runs the same image even if its name moves to another; its
// error wraps ErrUnsupportedImage. HoldImage keeps the image ref names from
// removal while key (an agent) may still start sandboxes of it, until
// ReleaseImage(key).
type ImageResolver interface {
	ResolveImage(name string) (string, error)
	HoldImage(key, ref string) error
	ReleaseImage(key string)
}

// Backend runs sandboxes. Implementations must be safe for concurrent use.
type Backend interface {
	Name() string
	Create(ctx context.Context, spec Spec) (Info, error)
	Exec(ctx context.Context, id string, req ExecRequest) (ExecResult, error)
	Pause(ctx context.Context, id string) error
	Resume(ctx context.Context, id string) error
	Stats(ctx context.Context, id string) (Stats, error)
	Info(ctx context.Context, id string) (Info, error)
	Destroy(ctx context.Context, id string) error
	// Close destroys every sandbox the backend created and releases its resources.
	Close() error
}
