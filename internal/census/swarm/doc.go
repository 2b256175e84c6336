// Package swarm runs the census of seed 002 end to end: it resolves sibling
// cgroups and pids for `tenon census`, and for `tenon census swarm` it
// launches N siblings of a coding-agent workload on one repository, censuses
// them on the seed's schedule and cleans everything up.
//
// The workload is a resident language server holding a medium Go
// repository open (gopls, spoken to over JSON-RPC by a small LSP client),
// plus per round: a grep over the repository, one private file edit pushed
// to the server followed by hover, definition and references, a full build
// (go build ./...) every third round and a test run of one small package
// every second round. The file a sibling edits and the pattern it greps are
// chosen by an RNG seeded with the run seed and the sibling's index.
//
// The repository (default gonum.org/v1/plot, copied from the module cache)
// is vendored and carries the "image" in its .tenon directory: the gopls
// binary and a warm Go build cache (builds use -trimpath so the cache is
// valid at every path). It is the shared read-only lower layer.
//
// Configurations (seed 002's arms, without Firecracker):
//
//   - host-overlay: host processes, each sibling reading the repository
//     through its own overlayfs (shared lower, private upper);
//   - sandbox: one internal/sandbox/process sandbox per sibling (own pid,
//     mount, ipc, uts and net namespaces and root file system) whose
//     workspace is the sibling's overlay: the seed's shared-read-only
//     container arm. gopls runs as a daemon in the sandbox and listens on a
//     unix socket in the workspace, which the host reaches through the
//     overlay; every other step is a sandbox action;
//   - ns-overlay: host processes with the overlay mounted in a private
//     mount namespace per sibling (unshare -m), at one path for all;
//   - copied: host processes, each sibling with its own copy of the
//     repository (the toolchain directory stays shared).
//
// gopls is never mapped through an overlay (the census keys file pages by
// inode, and an overlay file has its own): host siblings run it from the
// lower's host path, sandboxes from the backend's /usr/local/bin.
//
// Host siblings live in their own cgroup (memory and freezer), entered by a
// wrapper before exec so nothing escapes; sandboxes in the backend's. The
// census freezes those cgroups. Teardown kills the cgroups (or destroys the
// sandboxes), unmounts and removes the temporary tree, also when the context
// is cancelled.
//
// The package owns what it creates under its work directory and the cgroups
// under Options.CgroupParent. It does not touch other cgroups.
package swarm
