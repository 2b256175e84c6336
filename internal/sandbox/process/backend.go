//go:build linux

package process

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/tenon-dev/tenon/internal/cgroup"
	"github.com/tenon-dev/tenon/internal/disk"
	"github.com/tenon-dev/tenon/internal/sandbox"
)

// Backend runs sandboxes as libcontainer containers. It is safe for
// concurrent use; actions within one sandbox run one at a time.
type Backend struct {
	cfg    Config
	log    *slog.Logger
	system []systemDir
	// etcBinds are the host entries bound into the generated /etc (etc.go).
	etcBinds []etcBind
	// runtime runs the executor in image sandboxes (runtime.go).
	runtime hostRuntime
	// parents are the <hierarchy>/<CgroupParent> directories libcontainer
	// creates in the hierarchies the domain does not manage
	// (foreignParents); New and Close remove them.
	parents []string

	mu       sync.Mutex
	boxes    map[string]*box
	creating map[string]bool
	closed   bool
}

var _ sandbox.Backend = (*Backend)(nil)

// New prepares a backend. It creates cfg.StateDir, removes sandboxes an
// earlier backend on the same StateDir left behind, and checks the host's
// system directories; it starts no process.
func New(cfg Config) (*Backend, error) {
	quietLibcontainer()
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	if _, ok := cfg.Layout.Controller(cgroup.Pids); !ok && cfg.PidsMax > 0 {
		return nil, fmt.Errorf("process backend: %w: the per-sandbox process cap (pids.max) needs it; set Config.PidsMax < 0 to run uncapped", ErrNoPidsController)
	}
	if cfg.DiskMax > 0 {
		if err := disk.Check(); err != nil {
			return nil, fmt.Errorf("process backend: the per-sandbox disk limit: %w; set Config.DiskMax < 0 to run unlimited", err)
		}
	}
	sys, err := hostSystemDirs(cfg.HostRoot)
	if err != nil {
		return nil, fmt.Errorf("process backend: %w", err)
	}
	if fi, err := os.Stat(filepath.Join(cfg.HostRoot, "usr/local/bin")); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("process backend: the host needs a /usr/local/bin directory to mount tenon on")
	}
	b := &Backend{
		cfg:      cfg,
		log:      cfg.Logger,
		system:   sys,
		boxes:    make(map[string]*box),
		creating: make(map[string]bool),
	}
	// The sandboxes' layers and container states are root's alone: a
	// sandbox's root can make a setuid-root file in its layer, which a
	// host user who could reach it would run as root. A directory an
	// earlier version made wider is narrowed.
	for _, d := range []string{b.sandboxesDir(), b.containersDir(), b.binDir()} {
		mode := os.FileMode(0o700)
		if d == b.binDir() {
			mode = 0o711
		}
		if err := os.MkdirAll(d, mode); err != nil {
			return nil, fmt.Errorf("process backend: creating state dir: %w", err)
		}
		if err := os.Chmod(d, mode); err != nil {
			return nil, fmt.Errorf("process backend: %w", err)
		}
	}
	if b.etcBinds, err = makeEtc(b.etcDir(), cfg.HostRoot); err != nil {
		return nil, fmt.Errorf("process backend: %w", err)
	}
	// The mount point of the executable inside the sandboxes' /usr/local/bin.
	f, err := os.OpenFile(filepath.Join(b.binDir(), filepath.Base(exeMount)), os.O_CREATE|os.O_RDONLY, 0o755)
	if err != nil {
		return nil, fmt.Errorf("process backend: %w", err)
	}
	f.Close()
	if cfg.Images != nil {
		if b.runtime, err = findRuntime(cfg.Executable, "/"); err != nil {
			return nil, fmt.Errorf("process backend: running tenon in image sandboxes: %w", err)
		}
		if err := b.runtime.makeRuntimeDir(b.rtDir()); err != nil {
			return nil, fmt.Errorf("process backend: %w", err)
		}
	}
	b.reapStale()
	b.parents, err = foreignParents(cfg.Layout.ProcRoot, cfg.CgroupParent, ownRoots(cfg.Layout))
	if err != nil {
		return nil, fmt.Errorf("process backend: %w", err)
	}
	b.removeParents() // what a crashed backend left
	return b, nil
}

func (b *Backend) sandboxesDir() string  { return filepath.Join(b.cfg.StateDir, "sandboxes") }
func (b *Backend) containersDir() string { return filepath.Join(b.cfg.StateDir, "containers") }
func (b *Backend) binDir() string        { return filepath.Join(b.cfg.StateDir, "bin") }
func (b *Backend) etcDir() string        { return filepath.Join(b.cfg.StateDir, "etc") }

// procRoot is the host's /proc (Layout.ProcRoot).
func (b *Backend) procRoot() string {
	if b.cfg.Layout.ProcRoot == "" {
		return "/proc"
	}
	return b.cfg.Layout.ProcRoot
}

// mountinfo is the host mount table, under Layout.ProcRoot.
func (b *Backend) mountinfo() string {
	return filepath.Join(b.procRoot(), "self", "mountinfo")
}

// Name is "process".
func (b *Backend) Name() string { return "process" }

// get returns the live sandbox id.
func (b *Backend) get(id string) (*box, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, sandbox.ErrClosed
	}
	bx, ok := b.boxes[id]
	if !ok {
		return nil, fmt.Errorf("sandbox %q: %w", id, sandbox.ErrNotFound)
	}
	return bx, nil
}

// WritableLayer returns the host directory holding everything the sandbox
// wrote outside its workspace and /dev/shm: on the host image its root
// file system (mount points of the system directories appear in it as
// empty directories), on an imported image its overlay upper directory
// (deletions of the image's files are whiteouts there).
func (b *Backend) WritableLayer(id string) (string, error) {
	bx, err := b.get(id)
	if err != nil {
		return "", err
	}
	return bx.layer, nil
}

// Info describes a live sandbox.
func (b *Backend) Info(ctx context.Context, id string) (sandbox.Info, error) {
	bx, err := b.get(id)
	if err != nil {
		return sandbox.Info{}, err
	}
	paused, err := bx.group.Frozen()
	if err != nil {
		paused = bx.paused.Load()
	}
	return sandbox.Info{
		ID:         id,
		CgroupPath: bx.cgroupPath,
		InitPid:    bx.initPid,
		Labels:     maps.Clone(bx.spec.Labels),
		Paused:     paused,
	}, nil
}

// Pause freezes every process of the sandbox.
func (b *Backend) Pause(ctx context.Context, id string) error {
	bx, err := b.get(id)
	if err != nil {
		return err
	}
	if err := bx.freeze(ctx); err != nil {
		return fmt.Errorf("pausing sandbox %s: %w", id, err)
	}
	bx.paused.Store(true)
	return nil
}

// Resume thaws a paused sandbox.
func (b *Backend) Resume(ctx context.Context, id string) error {
	bx, err := b.get(id)
	if err != nil {
		return err
	}
	if err := bx.group.Thaw(ctx); err != nil {
		return fmt.Errorf("resuming sandbox %s: %w", id, err)
	}
	bx.paused.Store(false)
	return nil
}

// Stats reads the sandbox's cgroup. Procs counts processes, init included.
func (b *Backend) Stats(ctx context.Context, id string) (sandbox.Stats, error) {
	bx, err := b.get(id)
	if err != nil {
		return sandbox.Stats{}, err
	}
	m, err := bx.group.Memory()
	if err != nil {
		return sandbox.Stats{}, fmt.Errorf("stats of sandbox %s: %w", id, err)
	}
	st := sandbox.Stats{
		Memory:     m.Usage + m.Swap,
		WorkingSet: m.WorkingSet,
		Peak:       m.Peak,
		OOMKills:   m.OOMKills,
	}
	pids, err := bx.group.Pids()
	if err != nil {
		return sandbox.Stats{}, fmt.Errorf("stats of sandbox %s: %w", id, err)
	}
	b.activity(bx, &st, pids, true)
	return st, nil
}

// Sample is Stats without WorkingSet, Peak and OOMKills (sandbox.Sampler):
// the memory from its two counters (Charged) and the processes from the
// memory hierarchy alone (MemoryPids; a sandbox's processes are in every
// hierarchy). The gate reads every live sandbox each period, and on a
// host where a system call is dear (a PVM guest) Stats' reads made the
// gate's tick outlast a compressed replay's 20 ms period. Live (batch18
// at 1 GiB compressed twelvefold, 2 cores) the controller took 0.37 cores
// in steady state where it took 0.51 with Stats, and its gate ran at its
// period; tenon's makespan was 259-269 s against 249-252 s (two
// interleaved runs each), P50 167-177 s against 167-171 s: sampling on
// time, the gate saw more pressure changes (243 against 108-117) and
// residency reclaimed more (61-68 page-outs against 23-26).
//
// Without threads Blocked is not read (-1, unknown, or 0 when frozen):
// reading /proc/PID/task/TID/stat of every thread of every sandbox was 70 %
// of the gate loop's CPU and a third of the controller's (perf, same
// case), and only the OOM hold's progress signal needs it, while the hold
// waits or may begin to (policy.Machine.WantsThreads). Live, same case,
// two interleaved runs each: the controller's CPU 91-96 core-seconds a
// run against 144-158, makespan 214-221 s against 260-278 s (216-230 s in
// three earlier runs that day), P50 136-145 s against 185-209 s.
func (b *Backend) Sample(_ context.Context, id string, threads bool) (sandbox.Stats, error) {
	bx, err := b.get(id)
	if err != nil {
		return sandbox.Stats{}, err
	}
	v, err := bx.group.Charged()
	if err != nil {
		return sandbox.Stats{}, fmt.Errorf("sample of sandbox %s: %w", id, err)
	}
	pids, err := bx.group.MemoryPids()
	if err != nil {
		return sandbox.Stats{}, fmt.Errorf("sample of sandbox %s: %w", id, err)
	}
	st := sandbox.Stats{Memory: v}
	b.activity(bx, &st, pids, threads)
	return st, nil
}

// activity fills st's CPU, MemStall, Procs, Frozen and, with threads,
// Blocked (-1 without, unless frozen) for bx, whose processes are pids.
func (b *Backend) activity(bx *box, st *sandbox.Stats, pids []int, threads bool) {
	if cpu, err := bx.group.CPUUsage(); err == nil {
		st.CPU = cpu
	}
	// The sandbox's own pressure (v2); the host's (v1) says nothing of
	// it, and once the group has answered with the host's it is not read
	// again.
	if !bx.hostPSI.Load() {
		if p, err := bx.group.MemoryPressure(); err == nil {
			if p.Host {
				bx.hostPSI.Store(true)
			} else {
				st.MemStall = p.SomeTotal
			}
		}
	}
	st.Procs = len(pids)
	// A frozen group's threads all report state D (Linux 6.1 and later),
	// whatever they slept in, so none is counted: none of them can be in
	// a memory wait either, since a task in v1's OOM wait or v2's
	// throttling sleep (not freezable) keeps a v1 group FREEZING and a v2
	// group's cgroup.events frozen at 0 (group.Frozen is false for both).
	switch f, err := bx.group.Frozen(); {
	case err == nil && f:
		st.Frozen = true
	case threads:
		st.Blocked = blockedTasks(b.procRoot(), pids)
	default:
		st.Blocked = -1
	}
}

// Memory is Stats' Memory alone (sandbox.MemoryReader): the group's usage
// plus its swapped memory.
func (b *Backend) Memory(_ context.Context, id string) (int64, error) {
	bx, err := b.get(id)
	if err != nil {
		return 0, err
	}
	v, err := bx.group.Charged()
	if err != nil {
		return 0, fmt.Errorf("memory of sandbox %s: %w", id, err)
	}
	return v, nil
}

// WorkingSet is Stats' WorkingSet alone (sandbox.WorkingSetReader).
func (b *Backend) WorkingSet(_ context.Context, id string) (int64, error) {
	bx, err := b.get(id)
	if err != nil {
		return 0, err
	}
	v, err := bx.group.WorkingSet()
	if err != nil {
		return 0, fmt.Errorf("working set of sandbox %s: %w", id, err)
	}
	return v, nil
}

// Destroy kills the sandbox's processes and removes its cgroup and files.
// The workspace is removed only when the backend made it (Spec.Workspace
// empty). Destroying an unknown id is not an error.
func (b *Backend) Destroy(ctx context.Context, id string) error {
	b.mu.Lock()
	bx, ok := b.boxes[id]
	delete(b.boxes, id)
	b.mu.Unlock()
	if !ok {
		return nil
	}
	return bx.destroy(ctx)
}

// Close destroys every sandbox and removes the backend's files and the
// parent cgroups it created.
func (b *Backend) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	boxes := slices.Collect(maps.Values(b.boxes))
	clear(b.boxes)
	b.mu.Unlock()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var errs []error
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, bx := range boxes {
		wg.Go(func() {
			if err := bx.destroy(ctx); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for _, d := range []string{b.sandboxesDir(), b.containersDir()} {
		if err := os.Remove(d); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("removing %s: %w", d, err))
		}
	}
	for _, d := range []string{b.binDir(), b.rtDir(), b.rtDir() + ".sh"} {
		if err := os.RemoveAll(d); err != nil {
			errs = append(errs, err)
		}
	}
	b.removeParents()
	return errors.Join(errs...)
}

// foreignParents lists the parent cgroups libcontainer creates in the
// hierarchies the workload domain does not manage (on this kind of host
// blkio, cpuset, devices, the named systemd one and, on hybrid hosts, the
// cgroup2 one; every hierarchy mounted per <procRoot>/self/mountinfo
// except the roots in own): in each, the levels of parent that do not
// exist yet and parent itself, shallowest first. parent itself is listed
// even when it exists, since a run killed with SIGKILL leaves it behind
// (empty once its sandboxes are reaped) and whoever owns the domain of
// that name owns it.
func foreignParents(procRoot, parent string, own []string) ([]string, error) {
	if procRoot == "" {
		procRoot = "/proc"
	}
	f, err := os.Open(filepath.Join(procRoot, "self", "mountinfo"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	mounts, err := cgroup.ParseMountinfo(f)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range mounts {
		if slices.Contains(own, m.MountPoint) {
			continue
		}
		var levels []string
		for p := parent; p != "." && p != "/" && p != ""; p = filepath.Dir(p) {
			levels = append(levels, filepath.Join(m.MountPoint, p))
		}
		for i, l := range slices.Backward(levels) {
			if _, err := os.Stat(l); i == 0 || errors.Is(err, os.ErrNotExist) {
				out = append(out, l)
			}
		}
	}
	return out, nil
}

// ownRoots are the hierarchy roots of the layout's controllers, where the
// workload domain creates and removes its own group.
func ownRoots(l *cgroup.Layout) []string {
	var out []string
	for _, m := range l.Controllers {
		out = append(out, m.Root)
	}
	return out
}

// removeParents removes the empty parent cgroups of foreignParents,
// deepest first; one that holds groups (another backend's sandboxes) stays.
func (b *Backend) removeParents() {
	for _, p := range slices.Backward(b.parents) {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			b.log.Debug("leaving parent cgroup", "dir", p, "err", err)
		}
	}
}
