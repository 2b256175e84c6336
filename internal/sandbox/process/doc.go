// Package process is tenon's embedded sandbox backend: every sandbox is a
// container made with libcontainer (runc), with its own pid, mount, ipc, uts
// and (unless Spec.Network) net namespaces, no daemon involved.
//
// # Root file system
//
// Each sandbox owns one host directory, <StateDir>/sandboxes/<id>/rootfs. It
// is the container's root and its whole writable layer: everything an action
// writes outside the mounts below (/root, /opt, /var, /tmp, /home, ...) lands
// there, and nowhere else. On top of it, inside the container's mount
// namespace only, libcontainer mounts read-only binds of the host's /usr
// (and of /bin, /lib, /lib64, /sbin where they are real directories;
// where the host has merged /usr they are recreated as symlinks), a
// generated read-only /etc (<StateDir>/etc: passwd, group, nsswitch.conf,
// the sandbox's own hosts, the host's resolv.conf with Spec.Network, and
// binds of the public host entries tools need, such as ld.so.cache, the
// alternatives and CA certificates; nothing else of the host's; etc.go), /proc,
// a minimal /dev, a read-only /sys, the workspace at /workspace (read-write),
// the tenon executable at /usr/local/bin/tenon (read-only; the host's
// /usr/local/bin is replaced by a directory holding only tenon) and the
// directories of Spec.Binds (sandbox.ValidateBinds keeps them out of the
// paths above; a read-write one is how a replay shows the workspace again
// at /testbed).
//
// # Imported images
//
// With Config.Images (internal/imagestore, filled by `tenon image import`,
// `tenon image pull` and `tenon image build`), Spec.Image may name an image of the store (a
// name, an id, or a name pinned to an id, "name@sha256:..."). The sandbox's
// root is then an overlay mounted by the backend in the host's mount
// namespace on <sandbox dir>[/fs]/merged: the image's layer directories
// are its lower directories (read-only, the same directories for every
// sandbox of the image, so they share one page cache), its upper
// directory <sandbox dir>[/fs]/rootfs is the sandbox's writable layer
// (WritableLayer; Spec.RootfsFrom becomes it). Nothing of the host's
// system directories nor the generated /etc is bound: the image brings its
// own; /etc/hosts (and resolv.conf with Spec.Network) are bound as on the
// host image. The executor runs from /.tenon: the tenon executable and,
// when it is dynamically linked, the host's ELF loader and the libraries
// it needs (runtime.go), so an image without (or with another) C library
// runs it; /usr/local/bin/tenon is a script running it the same way. The
// image's Env (before Spec.Env, and HOME from its user's passwd entry),
// WorkingDir (the default Cwd) and User (resolved in the image's
// /etc/passwd and /etc/group; the workspace's top directory is given to
// a non-root user) apply to every action. The sandbox holds the image in
// the store (imagestore.Store.Hold) until it is destroyed, so `tenon
// image rm` refuses it meanwhile.
//
// With Config.DiskMax (10 GiB unless set; < 0 for none) the rootfs and
// the workspace the backend makes lie on a sparse ext4 image of that size,
// <StateDir>/sandboxes/<id>/disk.img, loop-mounted on
// <StateDir>/sandboxes/<id>/fs (internal/disk): the only mount the backend
// makes in the host's mount namespace. A write past the limit fails with
// ENOSPC and ExecResult.DiskFull says so. Destroy unmounts it (the loop
// device detaches itself) and removes the image; after a crash New does.
// WritableLayer returns the directory for capture.
//
// Spec.RootfsFrom starts a sandbox from such a directory captured earlier
// (and restored): it is renamed into place as the new rootfs before init
// starts (copied, then removed, when it lies on another file system), and
// whatever the skeleton lacks is created (SupportsRootfsFrom reports true).
// Procs lists the processes of the sandbox's cgroup except init (the
// executor), with their comm names: what an action left running.
// With Config.SalvageDir set, New moves the rootfs of each stale sandbox
// there instead of deleting it, so a caller can rebuild the sandbox after a
// crash (internal/residency/managed does).
//
// # Executor
//
// The container's init is the tenon binary itself in a hidden mode
// (argv[1] == "__sandbox-init"). It reads JSON requests and answers on a
// unix socket pair the host makes (protocol.go); each action is forked from
// it (new process group, cwd, env, /dev/null stdin, stdout and stderr on
// pipes of its own, capped), so an action costs one fork/exec instead of
// libcontainer's re-exec of the init binary.
//
// The channel is out of the sandbox's reach, and each result is bound to
// its request:
//   - the executor's end is its fd 3, marked close-on-exec as the executor
//     starts, so no action inherits it; its stdin is /dev/null and its
//     stdout and stderr only feed the host's log;
//   - the executor makes itself non-dumpable (PR_SET_DUMPABLE 0), so no
//     process of the sandbox (none has CAP_SYS_PTRACE) may ptrace it, open
//     or read its /proc/1/fd entries, or copy its fds with pidfd_getfd
//     (and a socket cannot be opened through /proc at all);
//   - every exec carries a fresh 128-bit random nonce that the executor
//     echoes; the host drops any message whose seq and nonce are not those
//     of the exec it waits for.
//
// As pid 1 of the sandbox it reaps orphans (a blocking waitid, not
// SIGCHLD) and, on a timeout or cancel, kills the action's process group.
//
// The executor survives its sandbox being paged out (PageOut) and thawed
// while the workload domain sits at its budget under the v1 OOM hold,
// where a page fault the kernel takes for the process (not one of its own
// instructions) fails instead of waiting: it takes no signals (its
// GODEBUG has asyncpreemptoff=1; SIGCHLD is SIG_DFL), has no glibc rseq
// area (GLIBC_TUNABLES glibc.pthread.rseq=0), and retries a read or write
// that failed with EFAULT after touching its buffer (heldio_linux.go). A
// signal frame or rseq update on a swapped-out page used to kill it with
// SIGSEGV. Both settings are appended to the sandbox's own GODEBUG and
// GLIBC_TUNABLES for the executor only and taken off again for every
// action (env.go). The actions' own processes get no such protection: a
// tool paged out and thawed under the hold may still die that way.
//
// # Idle loop
//
// Between actions the executor is not needed, and as the tenon binary it
// holds ~4 MiB (Go initializes every package the binary links; plus its
// prewarmed threads), which on real traces, where idle sandboxes' memory
// fills the budget, is a floor of its own in every sandbox. With
// Config.IdleLoop the host asks it to hibernate after each action and
// after the start: it execs the same binary as the idle loop, a
// C constructor that runs before the Go runtime, holds ~0.1 MiB, and
// execs the executor again when the next request arrives (~15 ms of CPU).
// It does so only when init has no child, so that no process of the
// sandbox can reach init while exec makes it dumpable for an instant: a
// sandbox with a background process keeps its executor. idle_linux.go
// has the details.
//
// # Leftovers and deadlines
//
// Actions of one sandbox run one at a time. An action's result comes when
// its main process has exited and its output pipes closed (or 100 ms after
// the exit, when a background process keeps them open). The host then
// kills, through the sandbox's cgroup, the processes the action left
// (leftovers.go), unless the action is marked Background
// (sandbox.ExecRequest.Background); a timeout or cancel kills them either
// way. The action's processes are those that were not running when it
// started and do not descend from one that was: its own tree (setsid or
// not) and every orphan adopted by init meanwhile. So the processes a
// Background action left (a server) and their children survive later
// actions; a grandchild they orphan is adopted by init and killed with the
// next action's leftovers. The kill freezes the sandbox around each round,
// so a fork bomb cannot outrun it. Stats.Procs counts the sandbox's
// processes, so Procs == 1 means only init remains (the condition
// residency needs before capturing a sandbox).
//
// Deadlines are enforced from outside the sandbox, not only by the
// executor's timer: one second (deadlineGrace) after an action's timeout,
// or one second after its context ended, the host kills the action's
// processes through the cgroup; if the executor has not answered one
// second later, the host kills the sandbox (SIGKILL to init ends its pid
// namespace) and Exec returns a timed-out result with an error wrapping
// sandbox.ErrSandboxDead. The executor is non-dumpable, so processes of
// the sandbox cannot ptrace-stop it; the fallback covers an executor stuck
// otherwise.
//
// Every sandbox's cgroup has pids.max = Config.PidsMax (DefaultPidsMax,
// 1024, unless set; < 0 for none), set while init is its only task: a fork
// bomb's forks fail with EAGAIN. The workload domain's own cap is the
// caller's to set (cgroup.Group.SetPidsLimit on the domain's group).
//
// Scoped actions (sandbox.ExecRequest.Scoped, seed 001's per-tool arena)
// run in their own child cgroup <sandbox cgroup>/tool-<seq>: the executor
// starts the action blocked on a gate trampoline and announces its pid
// (op "gate"); the host finds the host pid (NSpid), creates the scope,
// moves the pid in and opens the gate (op "open"; "abort" on failure, the
// action then exits 125 unstarted and Exec returns the error). When the
// result is in, the host kills what is left in the scope, empties its
// memory (cgroup.Drop: v1 force_empty, v2 memory.reclaim) and removes
// it. Trivial commands (classify.go) skip the scope; the default path has
// no gate and no extra round trip. See scoped.go.
//
// Binaries that link this package must call MaybeInit first thing in main
// (and test binaries in TestMain): it serves both libcontainer's "init"
// re-exec and the executor mode, and returns at once otherwise. The package
// also locks the main goroutine to the main thread (an init function), so
// that libcontainer's per-container namespace threads never park the main
// thread in a container's mount namespace.
//
// Stale state: New removes the sandboxes a crashed backend left in the same
// StateDir (processes, cgroups, files).
//
// # Cgroups
//
// The container's cgroup is <Config.CgroupParent>/<id> in every mounted
// hierarchy (libcontainer's cgroup manager creates it, the devices cgroup
// included; on hybrid hosts also in the cgroup2 one); memory statistics, the
// OOM-kill counter and the freezer go through internal/cgroup. On cgroup v2
// the first scoped exec (scoped.go) moves the sandbox's own tasks into the
// leaf <id>/init, since a v2 group with tasks of its own cannot give its
// children (the per-tool scopes) the memory controller. With
// Config.OOMGroup, each sandbox's cgroup has memory.oom.group 1 on v2, so
// an OOM kill takes the whole sandbox, init included: that Exec returns
// the OOM-killed result, later ones ErrSandboxDead. New (after reaping
// a crashed backend's sandboxes) and Close remove the parent directories
// libcontainer creates in hierarchies the workload domain does not manage
// (blkio, cpuset, devices, the named systemd and the cgroup2 hierarchy on a
// v1 host).
//
// # Security
//
// Ids are validated (sandbox.ValidateID) before they become paths; mount
// destinations are resolved inside the rootfs by libcontainer (securejoin);
// system binds are recursively read-only; no network namespace peer exists
// unless Spec.Network; processes run as uid 0 with a reduced capability set
// (container.go: no dac_override, net_raw, mknod, setfcap, audit_write),
// no_new_privs, a seccomp filter after Docker's default profile (keyrings,
// namespace creation, ptrace, mount, kexec, modules and the like refused;
// installed by the executor on itself, seccomp_linux.go), runc's masked
// and read-only /proc paths. docs/security.md
// states the threat model.
//
// This package must not touch cgroups outside Config.CgroupParent, nor
// mounts outside the sandboxes' own mount namespaces.
package process
