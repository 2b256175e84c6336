// Package adopted is the sandbox backend of containers tenon did not
// start: `tenon node` adopts the containers of Kubernetes agent pods,
// which the container runtime creates, runs and removes, and hands them to
// the daemon's control loop as sandboxes of this backend. The gate and
// the OOM hold act on them through Pause and Resume (the cgroup freezer)
// and Stats (the container's cgroup), exactly as on tenon's own sandboxes.
//
// The backend runs nothing itself: Create, Exec and Destroy are refused
// (ErrNotOwned); Add and Remove register and forget a container's cgroup.
// A container removed while frozen is thawed first, so that its runtime
// can stop it. It owns no cgroup: it never creates or deletes one.
package adopted
