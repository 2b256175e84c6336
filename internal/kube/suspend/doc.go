// Package suspend decides, for a Kubernetes node, which idle agents'
// Sandboxes (agent-sandbox's agents.x-k8s.io Sandbox) to suspend and when to
// resume them. It does not hold a residency policy of its own: every tick
// it hands the idle, running agents to policy.DecideReclaim, the keep /
// page-out / teardown choice internal/residency's Manager makes on one
// host, and a teardown decision becomes a suspend (the Sandbox's pod is
// deleted, its volume stays, agent-sandbox rebuilds the pod when the
// Sandbox runs again). A resume waits, as a demand-driven
// rematerialization does on one host, until policy.MayRematerialize allows
// it (not in red).
//
// Machine is a synchronous state machine: observations and the time in,
// decisions out; it reads no clock, starts no goroutine and talks to no
// API server. internal/kube's Residency drives it on a live node and
// applies its decisions to the Sandboxes.
//
// Page-out is not decided here: on a node it is the node agent's cgroup
// path, not the Sandbox's, so the policy runs with its page-out tier off
// and a sandbox that is not restart-safe is kept.
package suspend
