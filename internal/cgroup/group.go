package cgroup

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// group implements Group over raw control files. Each controller may live on
// its own hierarchy and version; every method dispatches on the version of
// the controller it needs, so hybrid hosts work.
type group struct {
	layout *Layout
	path   string
	dirs   map[string]string // controller -> directory of this group

	// write and rmdir are the kernel entry points; tests replace them to
	// simulate kernel behaviour (a freezer stuck in FREEZING, rmdir on a
	// fake tree).
	write func(path, value string) error
	rmdir func(path string) error
	kill  func(pid int) error
	// writeNoReclaim writes with O_NONBLOCK: memory.high and memory.max
	// then skip the reclaim a lower limit otherwise runs in the writer.
	writeNoReclaim func(path, value string) error

	mu   sync.Mutex
	peak *os.File // v2 memory.peak kept open after ResetPeak (the reset is per fd)

	hotMu sync.Mutex
	files map[string]*os.File // control files read each gate period, kept open (hot.go)
}

var _ Group = (*group)(nil)

// cleanPath validates a group path relative to the hierarchy roots.
func cleanPath(p string) (string, error) {
	c := path.Clean("/" + p)
	if c == "/" || strings.Contains(p, "..") {
		return "", fmt.Errorf("cgroup: invalid group path %q", p)
	}
	return strings.TrimPrefix(c, "/"), nil
}

func newGroup(layout *Layout, p string) (*group, error) {
	if layout == nil || layout.Controllers == nil {
		return nil, ErrNoMemoryController
	}
	if _, ok := layout.Controllers[Memory]; !ok {
		return nil, ErrNoMemoryController
	}
	c, err := cleanPath(p)
	if err != nil {
		return nil, err
	}
	dirs, err := layout.Dirs(c)
	if err != nil {
		return nil, err
	}
	return &group{layout: layout, path: c, dirs: dirs, write: sysWrite, rmdir: sysRmdir, kill: sysKill, writeNoReclaim: sysWriteNoReclaim}, nil
}

// Open returns an existing group. The group must exist in the memory
// hierarchy; hierarchies where it is missing are left out (operations that
// need them fail with ErrNoHierarchy).
func Open(layout *Layout, p string) (Group, error) {
	g, err := newGroup(layout, p)
	if err != nil {
		return nil, err
	}
	if !exists(g.dirs[Memory]) {
		return nil, fmt.Errorf("opening cgroup %s: %w", g.path, ErrNotExist)
	}
	for name, d := range g.dirs {
		if !exists(d) {
			delete(g.dirs, name)
		}
	}
	return g, nil
}

// Create makes the group in every hierarchy tenon uses (parents included) and
// returns it. On v2 it enables tenon's controllers in every ancestor's
// cgroup.subtree_control. Creating a group that exists is not an error.
func Create(layout *Layout, p string) (Group, error) {
	g, err := newGroup(layout, p)
	if err != nil {
		return nil, err
	}
	if layout.Unified != "" && g.usesUnified() {
		if err := g.enableSubtree(); err != nil {
			return nil, err
		}
	}
	for _, d := range g.uniqueDirs() {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("creating cgroup %s: %w", d, err)
		}
	}
	return g, nil
}

func (g *group) usesUnified() bool {
	for _, m := range g.layout.Controllers {
		if m.Version == V2 {
			return true
		}
	}
	return false
}

// enableSubtree writes +controller into cgroup.subtree_control of the
// unified root and every ancestor of the group, for each controller tenon
// keeps on v2 and the ancestor offers.
func (g *group) enableSubtree() error {
	var want []string
	for _, c := range []string{Memory, CPU, Pids} {
		if m, ok := g.layout.Controllers[c]; ok && m.Version == V2 {
			want = append(want, c)
		}
	}
	if len(want) == 0 {
		return nil
	}
	dir := g.layout.Unified
	parts := strings.Split(g.path, "/")
	for i := 0; i < len(parts); i++ {
		if i > 0 {
			dir = filepath.Join(dir, parts[i-1])
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return fmt.Errorf("creating cgroup %s: %w", dir, err)
			}
		}
		avail, _ := readString(filepath.Join(dir, "cgroup.controllers"))
		enabled, _ := readString(filepath.Join(dir, "cgroup.subtree_control"))
		for _, c := range want {
			if !slices.Contains(strings.Fields(avail), c) || slices.Contains(strings.Fields(enabled), c) {
				continue
			}
			if err := g.write(filepath.Join(dir, "cgroup.subtree_control"), "+"+c); err != nil {
				return fmt.Errorf("enabling %s in %s: %w", c, dir, err)
			}
		}
	}
	return nil
}

// uniqueDirs returns the group's directories, one per hierarchy, sorted.
func (g *group) uniqueDirs() []string {
	var ds []string
	for _, d := range g.dirs {
		if !slices.Contains(ds, d) {
			ds = append(ds, d)
		}
	}
	slices.Sort(ds)
	return ds
}

// dir returns the group's directory for a controller and its version.
func (g *group) dir(controller string) (string, Version, error) {
	d, ok := g.dirs[controller]
	if !ok {
		return "", 0, fmt.Errorf("cgroup %s: %s: %w", g.path, controller, ErrNoHierarchy)
	}
	return d, g.layout.Controllers[controller].Version, nil
}

// Path returns the group's path relative to the hierarchy roots.
func (g *group) Path() string { return g.path }

// AddProc moves pid into the group in every hierarchy.
func (g *group) AddProc(pid int) error {
	for _, d := range g.uniqueDirs() {
		if err := g.write(filepath.Join(d, "cgroup.procs"), fmt.Sprint(pid)); err != nil {
			return fmt.Errorf("adding pid %d to %s: %w", pid, d, err)
		}
	}
	return nil
}

// MemoryPids lists the tasks of the group and its descendants in the
// memory hierarchy alone, sorted: Pids where every task is in every
// hierarchy (a sandbox's: AddProc joins them all), with one directory
// walk instead of one per v1 hierarchy.
func (g *group) MemoryPids() ([]int, error) {
	d, _, err := g.dir(Memory)
	if err != nil {
		return nil, err
	}
	return g.pidsIn([]string{d})
}

// Pids lists the tasks of the group and its descendants in every hierarchy,
// sorted and without duplicates.
func (g *group) Pids() ([]int, error) { return g.pidsIn(g.uniqueDirs()) }

// pidsIn lists the tasks under each of the group's directories dirs,
// sorted and without duplicates.
func (g *group) pidsIn(dirs []string) ([]int, error) {
	var all []int
	for _, d := range dirs {
		ps, err := pidsUnder(d)
		if err != nil {
			return nil, fmt.Errorf("listing tasks of %s: %w", g.path, err)
		}
		all = append(all, ps...)
	}
	slices.Sort(all)
	return slices.Compact(all), nil
}

// pidsUnder reads cgroup.procs of dir and every descendant directory. A
// directory's link count is 2 plus its subdirectories (cgroupfs, like
// tmpfs and ext4), so a group without children, as most sandboxes are
// between actions, is read with a stat instead of a listing.
func pidsUnder(dir string) ([]int, error) {
	var out []int
	walk := walkGroups
	var st syscall.Stat_t
	if err := syscall.Stat(dir, &st); err == nil && st.Nlink == 2 {
		walk = func(dir string, fn func(string) error) error { return fn(dir) }
	}
	err := walk(dir, func(d string) error {
		b, err := readControl(filepath.Join(d, "cgroup.procs"))
		if err != nil {
			if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENODEV) {
				return nil // removed while walking
			}
			return err
		}
		ps, err := ParsePids(bytes.NewReader(b))
		if err != nil {
			return fmt.Errorf("%s: %w", d, err)
		}
		out = append(out, ps...)
		return nil
	})
	return out, err
}

// subdirs returns every descendant directory of dir, deepest first.
func subdirs(dir string) ([]string, error) {
	var ds []string
	err := walkGroups(dir, func(d string) error {
		if d != dir {
			ds = append(ds, d)
		}
		return nil
	})
	// Longer paths are deeper; remove them first.
	slices.SortFunc(ds, func(a, b string) int { return strings.Count(b, "/") - strings.Count(a, "/") })
	return ds, err
}

// Delete removes the group's directory, children first, in every hierarchy.
// rmdir is retried briefly on EBUSY (the kernel releases a cgroup shortly
// after its last task exits).
func (g *group) Delete() error {
	g.mu.Lock()
	if g.peak != nil {
		g.peak.Close()
		g.peak = nil
	}
	g.mu.Unlock()
	g.closeHot()
	var errs []error
	for _, d := range g.uniqueDirs() {
		if err := g.deleteTree(d, false); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// deleteTree removes dir's descendants and, unless childrenOnly, dir itself.
func (g *group) deleteTree(dir string, childrenOnly bool) error {
	subs, err := subdirs(dir)
	if err != nil {
		return fmt.Errorf("deleting cgroup %s: %w", dir, err)
	}
	if !childrenOnly {
		subs = append(subs, dir)
	}
	for _, d := range subs {
		if err := g.rmdirRetry(d); err != nil {
			return fmt.Errorf("deleting cgroup %s: %w", d, err)
		}
	}
	return nil
}

func (g *group) rmdirRetry(d string) error {
	var err error
	for i := 0; i < 50; i++ {
		err = g.rmdir(d)
		if err == nil || errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if !errors.Is(err, syscall.EBUSY) {
			return err
		}
		time.Sleep(10 * time.Millisecond)
	}
	return fmt.Errorf("%w: %w", ErrNotEmpty, err)
}

// The kernel entry points every new group starts with. Tests replace them
// (never in parallel) so that fake trees see simulated kernel behaviour and
// fake pids are never signalled.
var (
	sysWrite          = writeFile
	sysWriteNoReclaim = func(p, v string) error { return writeFileFlags(p, v, syscall.O_NONBLOCK) }
	// sysRmdir is rmdir(2): cgroupfs removes a group's directory with its
	// control files in one call.
	sysRmdir = func(p string) error { return syscall.Rmdir(p) }
	sysKill  = func(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }
)
