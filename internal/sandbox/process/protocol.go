package process

// The executor protocol: one JSON object a line, both ways, over a unix
// socket pair made by the host; the executor's end is its fd channelFd
// (close-on-exec once the executor runs, so no action inherits it). The
// host sends at most one exec at a time and may send a cancel while it
// runs. Every exec carries a fresh random Nonce that the executor echoes in
// the gate and result messages of that exec; the host drops any message
// whose Seq and Nonce are not those of the exec it waits for.

// Request operations.
const (
	opExec   = "exec"
	opCancel = "cancel"
	// opOpen answers a gate message: Abort false lets the gated action
	// exec, Abort true ends it unstarted (exit 125).
	opOpen = "open"
	// opHibernate asks an idle executor to make way for the idle loop
	// (idle_linux.go): it answers opAwake when it cannot, and the idle
	// loop announces itself with opIdle when it can.
	opHibernate = "hibernate"
)

// Response operations.
const (
	opReady  = "ready"
	opResult = "result"
	// opGate says a Gate exec is started and blocked before its first
	// instruction: Pid (in the sandbox's pid namespace) is the process the
	// host must place in the action's scope before it sends opOpen.
	opGate = "gate"
	// opIdle is the idle loop's only message (no Seq): the executor
	// exec'd it, and the sandbox's init holds next to nothing until the
	// next request wakes the executor again.
	opIdle = "idle"
	// opAwake refuses an opHibernate (Error says why): the executor stays.
	opAwake = "awake"
)

// initArg is argv[1] of the executor mode. The host starts the executor
// as PREFIX initArg PREFIX, where PREFIX is the command that runs the
// tenon binary inside the sandbox (its path, or the loader's command
// line for it): os.Args[2:] is then the command the executor and the
// idle loop exec each other with.
const initArg = "__sandbox-init"

// idleArg is argv[1] of the idle loop (idle_linux.go), wakeArg that of an
// executor the idle loop woke: it confines itself no further (the filter
// and no_new_privs survive exec) and sends no opReady.
const (
	idleArg = "__sandbox-idle"
	wakeArg = "__sandbox-wake"
)

// channelFd is the executor's end of the socket pair: the first of the
// init process's ExtraFiles.
const channelFd = 3

// request is a message from the host to the executor.
type request struct {
	Op      string   `json:"op"`
	Seq     uint64   `json:"seq,omitempty"`   // echoed in the result
	Nonce   string   `json:"nonce,omitempty"` // echoed in the gate and result
	Argv    []string `json:"argv,omitempty"`
	Shell   string   `json:"shell,omitempty"`
	Cwd     string   `json:"cwd,omitempty"`
	Env     []string `json:"env,omitempty"`
	Timeout int64    `json:"timeout_ns,omitempty"` // 0 = none
	Limit   int      `json:"limit,omitempty"`      // per-stream output cap
	// Gate (exec) starts the action blocked on a gate trampoline and sends
	// opGate before it may run; the default path has no gate.
	Gate bool `json:"gate,omitempty"`
	// Abort (open) closes the gate without running the action.
	Abort bool `json:"abort,omitempty"`
	// User (exec), when set, is who the action runs as (an image's User).
	User *credential `json:"user,omitempty"`
}

// credential is a user an action runs as.
type credential struct {
	Uid    uint32   `json:"uid"`
	Gid    uint32   `json:"gid"`
	Groups []uint32 `json:"groups,omitempty"`
}

// response is a message from the executor to the host.
type response struct {
	Op              string `json:"op"`
	Seq             uint64 `json:"seq,omitempty"`
	Nonce           string `json:"nonce,omitempty"`
	ExitCode        int    `json:"exit_code"`
	Stdout          []byte `json:"stdout,omitempty"`
	Stderr          []byte `json:"stderr,omitempty"`
	StdoutTruncated bool   `json:"stdout_truncated,omitempty"`
	StderrTruncated bool   `json:"stderr_truncated,omitempty"`
	TimedOut        bool   `json:"timed_out,omitempty"`
	Canceled        bool   `json:"canceled,omitempty"`
	// Error is set when the action could not be started (no such program,
	// bad cwd); ExitCode is then 127.
	Error string `json:"error,omitempty"`
	// Pid (gate) is the gated process in the sandbox's pid namespace.
	Pid int `json:"pid,omitempty"`
}
