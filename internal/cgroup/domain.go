package cgroup

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/tenon-dev/tenon/internal/units"
)

// DefaultDomain is the workload domain's group name when none is given.
const DefaultDomain = "tenon"

// Domain is the workload domain: the parent group every sandbox lives under,
// whose memory limit is the budget tenon manages.
type Domain struct {
	layout *Layout
	group  *group
	budget int64
	log    *slog.Logger
	lock   *OwnerLock
	stall  stallProbe // v2 OOM hold's stall signal (hold_v2.go)
}

// OpenDomain creates the domain group name (DefaultDomain when "") with a
// memory limit of budget bytes, owned by this process for as long as the
// domain is open: an owner lock (AcquireOwner) on <layout.LockDir>/<name>.lock
// holds its owner record (pid, boot id). A domain owned by a live process
// fails with *InUseError naming it. A group of that name whose owner is
// gone (a crashed run, whose record the lock file keeps) is adopted: its
// tasks are killed and its children deleted first. A group of that name
// holding tasks with no such record (`--domain system.slice`) is someone
// else's: it fails with ErrForeignGroup and is left alone. A budget above the machine's MemTotal
// (<layout.ProcRoot>/meminfo) fails with ErrBudgetTooLarge.
func OpenDomain(ctx context.Context, layout *Layout, name string, budget int64, log *slog.Logger) (*Domain, error) {
	return openDomain(ctx, layout, name, budget, false, log)
}

// OpenSharedDomain is OpenDomain for a domain whose groups belong to
// someone else (`tenon node`: the container runtime creates and removes
// the adopted containers' groups and owns their tasks): a group of that
// name left by an earlier owner is kept with its tasks and children, only
// its OOM hold disarmed and its tree thawed. Close it with Release, which
// leaves the group in place.
func OpenSharedDomain(ctx context.Context, layout *Layout, name string, budget int64, log *slog.Logger) (*Domain, error) {
	return openDomain(ctx, layout, name, budget, true, log)
}

func openDomain(ctx context.Context, layout *Layout, name string, budget int64, shared bool, log *slog.Logger) (*Domain, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if name == "" {
		name = DefaultDomain
	}
	if budget <= 0 {
		return nil, fmt.Errorf("cgroup: domain budget must be > 0, got %d", budget)
	}
	if layout == nil {
		return nil, ErrNoMemoryController
	}
	procRoot := layout.ProcRoot
	if procRoot == "" {
		procRoot = "/proc"
	}
	total, err := MemTotal(procRoot)
	if err != nil {
		return nil, err
	}
	if budget > total {
		return nil, fmt.Errorf("%w: budget %s > %s of RAM: pass a budget below the machine's memory",
			ErrBudgetTooLarge, units.FormatSize(budget), units.FormatSize(total))
	}
	// One domain, one name: "tenon/." and "./tenon" are the group "tenon",
	// and must take its lock, not a lock of their own.
	if name, err = cleanPath(name); err != nil {
		return nil, err
	}
	if err := nestedOwner(layout, name, procRoot); err != nil {
		return nil, err
	}
	lock, err := AcquireOwner(domainLockPath(layout, name), fmt.Sprintf("workload domain %q", name), procRoot, processCommand())
	if err != nil {
		return nil, err
	}
	d, err := openOwned(ctx, layout, name, budget, lock.Previous, shared, log)
	if err != nil {
		_ = lock.Release()
		return nil, err
	}
	d.lock = lock
	return d, nil
}

// openOwned is OpenDomain once this process owns the domain; prev is the
// record of a previous owner that died holding it.
func openOwned(ctx context.Context, layout *Layout, name string, budget int64, prev Owner, shared bool, log *slog.Logger) (*Domain, error) {
	if old, err := Open(layout, name); err == nil {
		if prev.PID == 0 && !shared {
			if err := foreign(old.(*group)); err != nil {
				return nil, err
			}
		}
		if prev.PID > 0 {
			log.Info("the workload domain's previous owner is gone", "domain", name, "pid", prev.PID, "command", prev.Command, "since", prev.Since)
		}
		adoptFn := adopt
		if shared {
			adoptFn = keep
		}
		if err := adoptFn(ctx, old.(*group), log); err != nil {
			return nil, fmt.Errorf("adopting stale domain %s: %w", name, err)
		}
	}
	g, err := Create(layout, name)
	if err != nil {
		return nil, fmt.Errorf("creating domain %s: %w", name, err)
	}
	d := &Domain{layout: layout, group: g.(*group), budget: budget, log: log}
	if err := d.group.ensureHierarchy(); err != nil {
		return nil, err
	}
	if err := d.group.SetMemoryLimit(budget); err != nil {
		return nil, fmt.Errorf("setting domain budget: %w", err)
	}
	log.Info("workload domain ready", "group", d.group.path, "budget", units.FormatSize(budget), "layout", layout.String())
	return d, nil
}

// foreign fails with ErrForeignGroup when g, found with no owner record,
// holds tasks: a domain tenon left has its owner's record (a crash keeps
// it, and so does a Close that could not empty and delete the group; a
// Close that did removes both), so such a group is not tenon's to empty.
// An empty one is adopted.
func foreign(g *group) error {
	pids, err := g.Pids()
	if err != nil {
		return err
	}
	if len(pids) == 0 {
		return nil
	}
	return fmt.Errorf("%w: cgroup %s already exists and holds %d tasks (pid %d first) but no tenon owner record: pick another domain name; if an earlier tenon did leave it, end those tasks first",
		ErrForeignGroup, g.path, len(pids), pids[0])
}

// adopt empties a group left by an earlier run: disarms its OOM hold (a run
// killed while holding leaves v1's oom_kill_disable at 1, and the next run
// would sleep at the budget instead of OOM-killing), thaws it, kills its
// tasks and deletes its children.
func adopt(ctx context.Context, g *group, log *slog.Logger) error {
	held, err := settle(ctx, g)
	if err != nil {
		return err
	}
	pids, err := g.Pids()
	if err != nil {
		return err
	}
	if len(pids) > 0 {
		if err := g.KillAll(ctx); err != nil {
			return err
		}
	}
	children, err := subdirs(g.dirs[Memory])
	if err != nil {
		return err
	}
	for _, dir := range g.uniqueDirs() {
		if err := g.deleteTree(dir, true); err != nil {
			return err
		}
	}
	log.Warn("adopted stale workload domain from an earlier run",
		"group", g.path, "killed_tasks", len(pids), "deleted_groups", len(children), "oom_hold_disarmed", held)
	return nil
}

// settle disarms the OOM hold an earlier owner left on g and thaws its
// tree; it reports whether there was a hold.
func settle(ctx context.Context, g *group) (bool, error) {
	held, err := disarmOOMHold(g)
	if err != nil {
		return false, err
	}
	return held, g.thawTree(ctx)
}

// keep takes over a shared group left by an earlier owner as it is: its
// OOM hold disarmed (nobody watched it) and its tree thawed (nobody will
// thaw what the earlier owner froze).
func keep(ctx context.Context, g *group, log *slog.Logger) error {
	held, err := settle(ctx, g)
	if err != nil {
		return err
	}
	log.Info("took over the shared workload domain with its groups", "group", g.path, "oom_hold_disarmed", held)
	return nil
}

// ensureHierarchy checks memory.use_hierarchy on v1: without it the domain's
// limit would not cover its children. Modern kernels always report 1.
func (g *group) ensureHierarchy() error {
	d, v, err := g.dir(Memory)
	if err != nil || v != V1 {
		return err
	}
	p := filepath.Join(d, "memory.use_hierarchy")
	if n, err := readInt(p); err == nil && n == 1 {
		return nil
	}
	if err := g.write(p, "1"); err != nil {
		return fmt.Errorf("enabling memory.use_hierarchy on %s: %w", g.path, err)
	}
	if n, err := readInt(p); err != nil || n != 1 {
		return fmt.Errorf("cgroup: memory.use_hierarchy of %s is not 1: the domain limit would not cover sandboxes", g.path)
	}
	return nil
}

// Group returns the domain's own group.
func (d *Domain) Group() Group { return d.group }

// Budget returns the memory limit the domain was opened with.
func (d *Domain) Budget() int64 { return d.budget }

// Child creates (or reuses) the child group name under the domain.
func (d *Domain) Child(name string) (Group, error) {
	if name == "" || strings.Contains(name, "..") {
		return nil, fmt.Errorf("cgroup: invalid child name %q", name)
	}
	g, err := Create(d.layout, path.Join(d.group.path, name))
	if err != nil {
		return nil, err
	}
	return g, nil
}

// Available is the domain's limit less its working set, floored at 0. The
// working set excludes inactive file cache, which the kernel reclaims
// before it OOM-kills (kubelet's eviction signal uses the same choice), so
// Available is what sandboxes can still grow into without a kill.
func (d *Domain) Available() (int64, error) {
	m, err := d.group.Room()
	if err != nil {
		return 0, err
	}
	return d.AvailableIn(m), nil
}

// AvailableIn is Available computed from m, a Room (or Memory) read of the
// domain's group, for a caller that needs other fields of the same read.
func (d *Domain) AvailableIn(m MemoryStats) int64 {
	limit := m.Limit
	if limit < 0 {
		limit = d.budget
	}
	return max(limit-m.WorkingSet, 0)
}

// Close kills every task left in the domain, deletes its children and the
// domain itself, and gives up ownership. When that fails the owner record
// stays in the lock file (the lock itself is dropped), so the next
// OpenDomain of the name adopts what is left.
func (d *Domain) Close(ctx context.Context) error {
	var errs []error
	if err := d.group.KillAll(ctx); err != nil {
		errs = append(errs, err)
	}
	if err := d.group.Delete(); err != nil {
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		d.log.Info("workload domain removed", "group", d.group.path)
		errs = append(errs, d.lock.Release())
	} else {
		// The group stays with what could not be removed: the owner
		// record stays too, so that the next open adopts it as a
		// crashed run's instead of refusing it as someone else's.
		d.lock.unlock()
	}
	d.lock = nil
	return errors.Join(errs...)
}

// Release gives up ownership of a shared domain (OpenSharedDomain),
// leaving its group, children and tasks in place.
func (d *Domain) Release() error {
	err := d.lock.Release()
	d.lock = nil
	return err
}

// DisableSwap keeps the domain's memory out of swap, as seed 000 §5.1 runs
// its workload domain: on v1 memory.swappiness is set to 0 (children created
// afterwards inherit it), on v2 memory.swap.max to 0. Without it, a budget
// overrun pages memory out instead of failing, and comparisons between
// policies measure swap speed. A kernel without either file is left as is.
func (d *Domain) DisableSwap() error {
	dir, v, err := d.group.dir(Memory)
	if err != nil {
		return err
	}
	file := "memory.swap.max"
	if v == V1 {
		file = "memory.swappiness"
	}
	p := filepath.Join(dir, file)
	if _, err := os.Stat(p); err != nil {
		return nil
	}
	if err := d.group.write(p, "0"); err != nil {
		return fmt.Errorf("disabling swap for domain %s: %w", d.group.path, err)
	}
	return nil
}

// nestedOwner refuses domain name (clean) when a domain above or below
// it in the hierarchy is owned by a live process: opening a domain adopts
// the group of that name, killing its tasks and deleting its children, so
// a parent would destroy the live domain inside it, and a child would
// take budget and groups out of the live domain around it. Lock names
// flatten "/" to "_", so a domain whose name holds "_" may be refused as
// the neighbour of another; it never goes unchecked.
func nestedOwner(layout *Layout, name, procRoot string) error {
	dir := lockDir(layout)
	stem := lockStem(name)
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("cgroup: reading the domain locks in %s: %w", dir, err)
	}
	for _, e := range entries {
		other := strings.TrimSuffix(e.Name(), ".lock")
		if e.IsDir() || other == e.Name() || other == stem {
			continue
		}
		if !strings.HasPrefix(stem, other+"_") && !strings.HasPrefix(other, stem+"_") {
			continue
		}
		o, ok := liveOwner(filepath.Join(dir, e.Name()), procRoot)
		if !ok {
			continue
		}
		return &InUseError{
			What:  fmt.Sprintf("workload domain %q (nested with the domain of lock %s)", name, e.Name()),
			Path:  filepath.Join(dir, e.Name()),
			Owner: o,
		}
	}
	return nil
}

// liveOwner reads the owner record at path and reports whether it names a
// live process.
func liveOwner(path, procRoot string) (Owner, bool) {
	f, err := os.Open(path)
	if err != nil {
		return Owner{}, false
	}
	defer f.Close()
	o, err := readOwner(f)
	if err != nil || o.PID <= 0 || o.PID == os.Getpid() {
		return o, false
	}
	return o, ownerAlive(o, procRoot)
}

// domainLockPath is the owner lock of domain name.
func domainLockPath(layout *Layout, name string) string {
	return filepath.Join(lockDir(layout), lockStem(name)+".lock")
}

// lockDir is where the domains' owner locks are.
func lockDir(layout *Layout) string {
	if layout.LockDir == "" {
		return DefaultLockDir
	}
	return layout.LockDir
}

// lockStem is the lock file name of domain name, without ".lock".
func lockStem(name string) string {
	return strings.ReplaceAll(strings.Trim(name, "/"), "/", "_")
}

// processCommand names this process in owner records: the program and its
// subcommand ("tenon serve"), never its flags (they may hold tokens).
func processCommand() string {
	cmd := filepath.Base(os.Args[0])
	if len(os.Args) > 1 && !strings.HasPrefix(os.Args[1], "-") {
		cmd += " " + os.Args[1]
	}
	return cmd
}
