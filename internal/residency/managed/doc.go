// Package managed connects internal/residency to real sandboxes and to the
// controller.
//
// Host is a residency.Host over any sandbox.Backend that exposes its
// sandboxes' writable layers (LayerBackend: WritableLayer(id) (string,
// error)) and can start a sandbox from a captured one
// (RootfsRestorer.SupportsRootfsFrom, sandbox.Spec.RootfsFrom); the process
// backend does both. Create renames the restored workspace into the
// sandbox's workspace directory (a copy when it lies on another file system) and passes the restored writable layer as
// Spec.RootfsFrom (never a bind mount of a staging path); Ready runs `true`;
// Procs uses the backend's optional ProcLister (the process and docker
// backends' Procs) or
// falls back to Stats.Procs; WorkingSet is Stats.WorkingSet; Destroy also
// removes the workspace (its content was captured before any teardown),
// except, with HostConfig.KeepWorkspaces, a workspace the spec names: that
// one is its caller's, stays in place (a mount point, for the daemon's
// size-limited workspaces), is not captured (residency.WorkspaceKeeper)
// and the next sandbox is built over it.
// Each live sandbox's spec is written to <Dir>/meta/<id>.json so that, after
// a crash, Revive can rebuild it under the same id from the layer the new
// process backend salvaged (process.Config.SalvageDir = SalvageDir(stateDir)).
// The docker backend exposes WritableLayer(id), honours Spec.RootfsFrom and
// lists its processes itself; WrapDocker names it as a Host backend (the
// compile-time checks live there).
//
// Manager is a controller.Sandboxes over a residency.Manager, for the
// tenon policy's SandboxManager(h) method:
//
//	m, err := managed.NewManager(managed.Config{StateDir: dir, TimeScale: scale}, h, pressure, log)
//	// return m (a controller.Sandboxes); Close it (io.Closer) after the run.
//
// Ensure → residency Ensure (create or rematerialize); Boundary →
// residency Boundary (restartable only when the action finished; for a
// replayed workflow the predicted wait is learned from the agent's
// earlier waits, each action's Wait × TimeScale, policy.WaitModel, never
// the next action's own; for the daemon's agents it is Agent.NextWait),
// after which the
// reclaim policy runs at the pressure the caller supplies; Release →
// destroy and forget the agent's records. SandboxHost.Up and Down are
// called for every sandbox coming and going, background teardowns and
// rematerializations included. NewManager recovers: it revives resident
// sandboxes lost in a crash (their processes are gone; their files are as
// the crash left them), and residency.Manager.Recover marks agents with a
// committed record absent (rebuilt on demand) and drops the rest.
//
// The page-out tier is on when the backend implements sandbox.Pager (the
// process backend; docker does not) and swap is on when NewManager runs
// (internal/swap reads /proc/swaps; `tenon swap enable` turns zram swap
// on), unless Config.NoPageOut: idle sandboxes, restart-safe or not, may
// then be frozen and paged out (residency's Pager, over the backend's)
// and are paged in before their next action. The compressed copy is
// charged against what a page-out frees at zram's measured ratio
// (mem_used_total / orig_data_size, once zram holds 4 MiB; residency's
// default of 1/3 before, and with swap on a disk). With swap off the tier
// is skipped and NewManager logs why; only restart-safe sandboxes are then
// reclaimed, by teardown.
//
// Manager.Metrics returns the residency counters (residency.Metrics:
// teardowns, rematerializations, bytes captured, memory reclaimed,
// lifecycle overhead, boundaries; RestartableShare()); every
// residency.Event delivered to Config.Residency.Sink carries the same
// snapshot and marshals to JSON for an event log.
//
// The package touches no /sys or /proc path itself.
package managed
