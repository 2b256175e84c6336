package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/tenon-dev/tenon/internal/api"
	"github.com/tenon-dev/tenon/internal/app"
	"github.com/tenon-dev/tenon/internal/units"
)

func init() {
	register(&command{name: "serve", summary: "run the daemon: an HTTP API for agent harnesses over a unix socket", run: runServe})
}

const defaultSocket = "/run/tenon/tenon.sock"

// idleLoopHelp is --idle-loop's help, in replay, serve, run and bench.
const idleLoopHelp = "process backend: between actions each sandbox's init is a C idle loop (~0.1 MiB) instead of the tenon executor (~4 MiB), " +
	"restarted for the next action (~15 ms of CPU); only where init has no other process (see internal/sandbox/process/idle_linux.go)"

const actuatorHelp = "how the gate holds back a denied sandbox: " + app.ActuatorNames +
	"; schedext paces it in a sched_ext scheduler (kernel with sched_ext, cgroup v2, root), cpu paces it through its cgroup's CPU limit (cpu.max, v1 cpu.cfs_quota_us), freezer freezes it, auto is schedext where it loads, else freezer"

func runServe(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "serve", "",
		"Run the tenon daemon: agents, actions, files, status, events and metrics over HTTP/JSON.",
		`The API listens on a unix socket (mode 0600). --listen adds a TCP listener, which
requires a bearer token (--token or TENON_TOKEN). See docs/api.md.
SIGTERM or Ctrl-C stops accepting requests, waits for running actions up to
--drain-timeout, releases every sandbox and keeps the agent registry for the next start.
One daemon owns a state directory and a workload domain: a second one on
either refuses to start and names the owner's pid.
The tenon policy's predictor starts from per-class priors (the bundled
workload calibration) and retrains on the daemon's own measured actions
every `+fmt.Sprint(app.RetrainEvery)+` actions; the models are kept, versioned, in
<state-dir>/model and the newest is loaded at start. --model starts from a
trained model instead (tenon predict train) and turns retraining off. The
model waits learned per agent are kept in <state-dir>/agents.db and loaded
at start too.`)
	socket := fs.String("socket", defaultSocket, "unix socket path")
	listen := fs.String("listen", "", "also listen on TCP, e.g. 127.0.0.1:7878 (needs a token)")
	token := fs.String("token", os.Getenv("TENON_TOKEN"), "bearer token for TCP clients (default $TENON_TOKEN)")
	stateDir := fs.String("state-dir", "/var/lib/tenon", "agent registry and workspaces")
	budget := units.Size(4 * units.GiB)
	fs.Var(&budget, "budget", "memory budget of the workload domain, e.g. 4GiB")
	domain := fs.String("domain", "tenon", "name of the workload domain cgroup")
	pol := fs.String("policy", app.DefaultPolicy(), "policy: "+fmt.Sprint(app.PolicyNames()))
	backend := fs.String("backend", "process", "sandbox backend: "+app.BackendNames)
	upstream := fs.String("upstream", "", "OpenAI-compatible base URL the model proxy forwards to, e.g. http://127.0.0.1:8000/v1")
	upstreamKey := fs.String("upstream-key", os.Getenv("TENON_UPSTREAM_KEY"), "API key sent upstream (default $TENON_UPSTREAM_KEY)")
	drain := fs.Duration("drain-timeout", 60*time.Second, "how long shutdown waits for running actions")
	diskMax := units.Size(10 * units.GiB)
	idle := fs.Bool("idle-loop", false, idleLoopHelp)
	fs.Var(&diskMax, "disk-max", "disk limit of each sandbox's writable layer and of each agent's workspace (sparse loop-mounted ext4 images; 0 for none)")
	daemonMemory := units.Size(1 * units.GiB)
	fs.Var(&daemonMemory, "daemon-memory", "soft memory limit of the daemon itself (GOMEMLIMIT wins); a quarter of it bounds large request bodies in flight")
	queueTimeout := fs.Duration("queue-timeout", api.DefaultQueueTimeout, "how long an action waits for its agent's slot and its admission before a 503")
	slotIdle := fs.Duration("slot-idle", api.DefaultSlotIdle, "an agent idle this long gives its admission slot to one that waits")
	actuator := fs.String("actuator", "auto", actuatorHelp)
	model := fs.String("model", "", "trained predictor file (tenon predict train); default: learn online from class priors")
	params := paramFlag{}
	fs.Var(params, "param", "policy parameter key=value, repeatable, as tenon replay takes them (e.g. cpu-pacing=off)")
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	return app.Serve(ctx, app.ServeConfig{
		Socket: *socket, Listen: *listen, Token: *token, StateDir: *stateDir, Budget: int64(budget),
		Domain: *domain, Policy: *pol, Params: params, Model: *model, Backend: *backend, Upstream: *upstream, UpstreamKey: *upstreamKey,
		Drain: *drain, DiskMax: int64(diskMax), DaemonMemory: int64(daemonMemory), QueueTimeout: *queueTimeout, SlotIdle: *slotIdle, Actuator: *actuator, IdleLoop: *idle, Status: env.stderr, Log: env.log,
	})
}
