// Package residency virtualizes sandbox residency (seed 000 §3.1, §3.4,
// Figure 6, Appendix D): a logical agent outlives its sandbox, which may be
// torn down while the agent waits for its model and rebuilt before its next
// action.
//
// It owns
//   - the restart-safe contract (Check): a boundary is restartable only when
//     the action exited, its result is recorded and no process but the
//     sandbox init is alive; otherwise it is resident_only;
//   - the teardown protocol (Manager.Teardown): block dispatch, validate,
//     capture the WHOLE writable layer and the workspace (not only
//     designated directories, so a package installed outside the workspace
//     survives; a workspace the host keeps in place, WorkspaceKeeper, is
//     left where it is), commit a recovery record, and only then destroy the
//     sandbox. Any failure before the commit leaves the sandbox resident.
//     Artifacts are archive trees: per-content blobs, so a teardown writes
//     only what changed since the sandbox was last captured or restored
//     (the agent's stat caches), and after the commit the captured files
//     are parked (hard links under StateDir/parked, see park.go) for the
//     next rematerialization;
//   - rematerialization (in Manager.Ensure): a fresh sandbox from the
//     recorded base with the artifacts extracted (digests verified; parked
//     files re-hashed and taken over, the rest copied from blobs) into
//     staging directories the Host adopts, a new sandbox id (hence a new
//     cgroup), and a readiness check; failures retry from the committed
//     record with backoff, deleting partial state first;
//   - the page-out tier (pageout.go), for hosts that implement Pager and
//     have swap on (Config.Policy.PageOut): an idle sandbox, restart-safe
//     or not, is frozen and its memory paged out to compressed swap when
//     policy.DecideReclaim prefers that to a teardown (more bytes freed
//     per second of delay); Ensure pages it in and thaws it before the
//     next action, Prefetch ahead of it. A page-out is credited with the
//     working set less its compressed copy (the host's ratio, zram's
//     mem_used_total / orig_data_size, else DefaultCompressionRatio): the
//     copy lives in host memory too. With swap off the tier is skipped
//     (logged at New) and only restart-safe sandboxes are reclaimed. In
//     red a sandbox the runtime gate froze mid-action (StallSandbox) is
//     paged out too once it has stalled Config.Policy.Stall; when the gate
//     lets it run, UnstallSandbox pages it back in, and with a host that
//     implements WholePager thaws it only when all of its memory came
//     back: otherwise it stays frozen (ErrThawDeferred; one
//     EventThawDeferred per page-out, Metrics.ThawDeferrals counting the
//     tries) and the gate asks again, tried after a backoff (250 ms
//     doubling to 2 s: each try reads all of its pages back), since a process thawed with memory
//     still out while the domain sits at its budget under the v1 OOM hold
//     can die of SIGSEGV;
//   - the pressure policy (policy.DecideReclaim, MayRematerialize; Table 1:
//     in green every idle sandbox stays while half the budget is free,
//     Config.Free, else one is reclaimed when its predicted wait amortizes
//     bringing it back; in yellow too; in red (and in yellow when its
//     wait is unknown) as many as Config.Need asks, cheapest per byte
//     first, counting the reclaims under way (every one that can be when
//     the need is unknown); a first sandbox is created under the same
//     rule as a rematerialization, never in red), the lifecycle
//     concurrency limit (Config.LifecycleLimit slots for teardowns and
//     rematerializations and as many for page-outs and page-ins, slots.go
//     and Manager.slotsFor; a first sandbox's creation takes none: under
//     pressure a
//     freed slot goes to a waiting teardown or page-out before any
//     rematerialization or page-in, in green in turn with them, and a
//     reclaim whose turn came is decided again and dropped when residency
//     would no longer choose it), the "always resident" ablation,
//     metrics and events, and crash recovery (Manager.Recover).
//
// It talks to sandboxes only through the Host interface and to disk only
// through internal/archive (blobs under Config.StateDir) and internal/store.
// It never touches /sys or /proc itself.
//
// # Host contract (for the backend adapter)
//
// Create(ctx, Spec) makes a sandbox with a new, never reused id from
// Spec.BaseImage and Spec.Runtime. When Spec.UpperFrom is set, that
// directory holds the sandbox's previous writable layer (an overlay upper
// dir, with whiteouts and opaque xattrs) and must become the new sandbox's
// writable layer before its init starts; likewise Spec.WorkspaceFrom for
// the host workspace mounted at /workspace. The host must move (rename,
// same filesystem: put Config.StateDir next to the backend's sandbox
// directories) or copy them; after Create returns the manager deletes
// whatever is left at those paths. Ready reports when an action can be
// dispatched. Paths returns the host directories of the live writable layer
// and workspace (read while the sandbox is quiescent). Procs lists live
// processes except the sandbox init. List returns every sandbox the host
// holds for this manager (Recover destroys those not in the registry).
//
// For the process backend: extract into StateDir/staging on the same
// filesystem as the sandbox directories and, in Create, rename UpperFrom
// to the new sandbox's overlay upper dir before mounting, and rename
// WorkspaceFrom to the workspace directory passed as sandbox.Spec.Workspace
// (never bind-mount the staging path itself: it is deleted after Create).
// Procs is the sandbox cgroup's cgroup.procs minus the init (and minus any
// resident in-sandbox executor), with /proc/<pid>/comm.
//
// # Controller adapter
//
// A controller.Sandboxes adapter maps Ensure(ctx, a) to Manager.Ensure
// with AgentInfo{ID: a.ID, Attempt: a.Attempt, NextAction: a.Next, ...}
// and sets a.SandboxID to the result; Boundary(ctx, a, o) to
// Manager.Boundary with BoundaryInfo{ActionExited: o.Err == nil,
// ResultRecorded: true, NextAction: o.Index + 1, PredictedWait: the next
// model wait as predicted from the agent's earlier ones (policy.WaitModel;
// managed does so)}; Release to Manager.Release. Teardowns run in the background
// after Boundary, so sandbox arrival and departure (for cgroup
// registration) are best observed in the adapter's Host.Create and
// Host.Destroy. Call Manager.Recover once at start when the store may hold
// state, and Manager.Tick whenever pressure changes (Boundary already
// ticks unless Config.ManualReclaim).
package residency
