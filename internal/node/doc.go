// Package node is `tenon node`: the node agent that runs tenon's control
// loop over the agent pods of a Kubernetes node. It connects to the
// container runtime's NRI socket as a plugin (containerd's Node Resource
// Interface) and:
//
//   - adopts the containers of pods annotated as agents (AnnotationAgent):
//     in CreateContainer it moves the container's cgroup under tenon's
//     workload domain (cgroupfs driver: <domain>/<container id>), and when
//     the container starts it becomes a sandbox of the adopted backend
//     (internal/sandbox/adopted) in the live set the daemon's policy
//     (internal/live) watches, so the gate freezes it and the OOM hold
//     holds its allocations exactly as for tenon's own sandboxes;
//   - forgets them when they stop (thawed first, so the runtime can stop
//     them), and re-adopts running ones after a restart (Synchronize);
//   - watches their OOM kill counters and classifies every kill (its own
//     limits.memory, the node's agent budget, or the host);
//   - reports per pod why it was paused, resumed or killed: a slog
//     record, the Prometheus metrics and Status, and an optional Reporter
//     (the apiserver path posts pod events through it).
//
// The package owns the NRI connection and its goroutines. It decides
// nothing about memory: the policy does, given by the composition root
// (internal/app), which also opens the domain and the backend. It must not
// read /sys or /proc itself: cgroups are reached through the Adopter.
package node
