// Package docker is the sandbox.Backend that runs each sandbox as a Docker
// container through the Docker Engine API (github.com/docker/docker/client,
// API 1.41 or later, negotiated).
//
// Every container lives under the workload domain (HostConfig.CgroupParent,
// a cgroupfs path such as "/tenon"), has no network unless the Spec asks for
// the host's, runs docker-init with "sleep infinity" as its init, and keeps
// its writable layer as its own. The base image (internal/image) is mounted
// with /usr and /etc read-only: they are bind-mounted read-only from the
// image's own layer directory, so nothing is copied. The agent's workspace is
// bind-mounted read-write at /workspace, and the tenon binary read-only at
// /usr/local/bin/tenon.
//
// Each action is a fresh exec. Memory, the freezer state and OOM kills are
// read from the container's own cgroup through internal/cgroup; a timed-out
// or cancelled action is ended by killing every task of the container's
// cgroup except the init tasks, which reaches processes that left the
// action's session too, and the sandbox stays (a cancelled one answers
// exit -1 when the kill is confirmed). What an action not marked
// Background leaves running (the tasks that were not in the container
// before it) is killed at its end. Each container's tasks are capped
// (Config.PidsMax, 1024: the engine's pids limit). CheckImage says
// whether the engine has an image, for refusing an agent at creation.
//
// Residency: WritableLayer(id) is the container's overlay2 UpperDir, which
// residency captures on the host while the sandbox is idle, and
// Spec.RootfsFrom (SupportsRootfsFrom) renames a captured layer into a
// fresh container's UpperDir before it starts, so a restore costs a rename
// rather than a copy through the engine (docker commit and
// export/CopyToContainer were measured slower: bench/results/docker.md).
// Procs names the tasks an action left running, for the restart-safe check.
// residency/managed.WrapDocker adapts the backend to managed.Host.
//
// Containers carry the labels tenon.sandbox=1 and tenon.domain=<parent> so
// RemoveStale finds what a crashed run left behind. The package owns the
// containers it creates and nothing else: it never touches the domain group
// in the hierarchies tenon manages; Close removes the copies runc made of it
// in the others (blkio, cpuset, devices, ...), under Config.CgroupRoot.
package docker
