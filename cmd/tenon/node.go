package main

import (
	"context"

	"github.com/tenon-dev/tenon/internal/app"
	"github.com/tenon-dev/tenon/internal/node"
	"github.com/tenon-dev/tenon/internal/units"
)

func init() {
	register(&command{name: "node", summary: "run as a Kubernetes node agent: adopt agent pods' containers through the runtime's NRI and run the gate over them", run: runNode})
}

func runNode(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "node", "",
		"Run tenon as the node agent of a Kubernetes node (an NRI plugin of containerd or CRI-O).",
		`Pods annotated `+node.AnnotationAgent+`: "true" are agents. When the runtime creates one of
their containers, tenon moves its cgroup under the workload domain (--domain,
cgroupfs driver), whose memory limit is --budget; when it starts, the gate
watches it like one of tenon's own sandboxes: under memory pressure it freezes
the growing containers (cgroup freezer) and thaws them when memory is back,
and the OOM hold makes allocations at the budget wait instead of being killed
until nothing progresses. Every OOM kill in an adopted container is classified
(its own limits.memory, the node's agent budget, or the host) and reported per
pod: in the log, in /metrics and /status (--listen). Other pods are not touched.
Needs root, the cgroup and NRI socket mounts, and NRI enabled in the runtime
(containerd: [plugins."io.containerd.nri.v1.nri"] disable = false).
SIGTERM thaws what the gate froze and disarms the OOM hold; the containers run
on and are re-adopted at the next start. See docs/kubernetes.md.`)
	socket := fs.String("nri-socket", node.DefaultNRISocket, "the runtime's NRI socket")
	domain := fs.String("domain", "tenon-node", "name of the workload domain cgroup the agent containers go under")
	budget := units.Size(0)
	fs.Var(&budget, "budget", "memory budget of the agent pods on this node, e.g. 48GiB (required)")
	pol := fs.String("policy", "gate", "policy: one with the gate alone (gate)")
	listen := fs.String("listen", "127.0.0.1:9464", `serve /metrics, /status and /healthz on this TCP address ("" for none)`)
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	return app.Node(ctx, app.NodeConfig{NRISocket: *socket, Domain: *domain, Budget: int64(budget), Policy: *pol,
		Listen: *listen, Status: env.stderr, Log: env.log})
}
