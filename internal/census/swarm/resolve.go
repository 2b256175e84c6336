package swarm

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/tenon-dev/tenon/internal/census"
	"github.com/tenon-dev/tenon/internal/cgroup"
)

// Targets names the siblings of a census.
type Targets struct {
	// Cgroups are cgroup directories or globs: absolute (any hierarchy, v1
	// or v2), relative to the working directory, or relative to the memory
	// hierarchy root ("tenon/sb-*").
	Cgroups []string
	// Pids are bare processes, each its own sibling, sampled unfrozen.
	Pids []int
	// Domain names tenon's workload domain: every child cgroup of
	// <memory root>/Domain is a sibling.
	Domain string
}

// Resolved is what Resolve found.
type Resolved struct {
	Siblings []census.Sibling
	// Freezers hold one cgroup.Group per sibling cgroup that has a freezer.
	Freezers []census.Freezer
	// Unfrozen names the siblings that will be sampled without freezing.
	Unfrozen []string
}

// Resolve turns targets into census siblings and their freezers. Cgroup
// siblings are frozen through internal/cgroup (the group's freezer
// hierarchy on v1, cgroup.freeze on v2); bare pids are sampled unfrozen
// (freezing them would mean moving foreign processes between cgroups).
func Resolve(layout *cgroup.Layout, t Targets, log *slog.Logger) (Resolved, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var res Resolved
	seen := make(map[string]bool)
	var dirs []string
	for _, arg := range t.Cgroups {
		m, err := expand(layout, arg)
		if err != nil {
			return Resolved{}, err
		}
		dirs = append(dirs, m...)
	}
	if t.Domain != "" {
		mem, ok := layout.Controller(cgroup.Memory)
		if !ok {
			return Resolved{}, cgroup.ErrNoMemoryController
		}
		root := filepath.Join(mem.Root, filepath.FromSlash(t.Domain))
		subs, err := childDirs(root)
		if err != nil {
			return Resolved{}, fmt.Errorf("listing domain %s: %w", t.Domain, err)
		}
		dirs = append(dirs, subs...)
	}
	for _, d := range dirs {
		if seen[d] {
			continue
		}
		seen[d] = true
		rel, err := relCgroup(layout, d)
		if err != nil {
			return Resolved{}, err
		}
		res.Siblings = append(res.Siblings, census.Sibling{Name: rel, Cgroups: []string{d}})
		f, err := freezerOf(layout, rel)
		if err != nil {
			log.Warn("census: sibling will be sampled unfrozen", "cgroup", d, "err", err)
			res.Unfrozen = append(res.Unfrozen, rel)
			continue
		}
		res.Freezers = append(res.Freezers, f)
	}
	for _, pid := range t.Pids {
		if pid <= 0 {
			return Resolved{}, fmt.Errorf("swarm: bad pid %d", pid)
		}
		name := "pid-" + strconv.Itoa(pid)
		res.Siblings = append(res.Siblings, census.Sibling{Name: name, Pids: []int{pid}})
		res.Unfrozen = append(res.Unfrozen, name)
	}
	if len(res.Siblings) == 0 {
		return Resolved{}, ErrNoSiblings
	}
	return res, nil
}

// expand resolves one cgroup argument to directories.
func expand(layout *cgroup.Layout, arg string) ([]string, error) {
	cands := []string{arg}
	if !filepath.IsAbs(arg) {
		if mem, ok := layout.Controller(cgroup.Memory); ok {
			cands = append(cands, filepath.Join(mem.Root, filepath.FromSlash(arg)))
		}
	}
	for _, c := range cands {
		m, err := filepath.Glob(c)
		if err != nil {
			return nil, fmt.Errorf("cgroup pattern %q: %w", arg, err)
		}
		var out []string
		for _, p := range m {
			if isCgroupDir(p) {
				a, err := filepath.Abs(p)
				if err != nil {
					return nil, err
				}
				out = append(out, a)
			}
		}
		if len(out) > 0 {
			slices.Sort(out)
			return out, nil
		}
	}
	return nil, fmt.Errorf("%w: %s matched no cgroup directory", ErrNotCgroup, arg)
}

func isCgroupDir(p string) bool {
	st, err := os.Stat(filepath.Join(p, "cgroup.procs"))
	return err == nil && st.Mode().IsRegular()
}

// childDirs lists the cgroup directories directly below root, sorted.
func childDirs(root string) ([]string, error) {
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		p := filepath.Join(root, e.Name())
		if e.IsDir() && isCgroupDir(p) {
			out = append(out, p)
		}
	}
	return out, nil
}

// relCgroup returns dir's path relative to the hierarchy root holding it.
func relCgroup(layout *cgroup.Layout, dir string) (string, error) {
	best := ""
	for _, m := range layout.Controllers {
		r := filepath.Clean(m.Root)
		if (dir == r || strings.HasPrefix(dir, r+string(filepath.Separator))) && len(r) > len(best) {
			best = r
		}
	}
	if best == "" {
		return "", fmt.Errorf("%w: %s is under no mounted cgroup hierarchy", ErrNotCgroup, dir)
	}
	rel, err := filepath.Rel(best, dir)
	if err != nil || rel == "." {
		return "", fmt.Errorf("%w: %s is a hierarchy root, not a sibling", ErrNotCgroup, dir)
	}
	return filepath.ToSlash(rel), nil
}

// freezerOf opens the group rel and checks that it has a freezer.
func freezerOf(layout *cgroup.Layout, rel string) (census.Freezer, error) {
	m, ok := layout.Controller(cgroup.Freezer)
	if !ok {
		return nil, cgroup.ErrNoHierarchy
	}
	if _, err := os.Stat(filepath.Join(m.Root, filepath.FromSlash(rel))); err != nil {
		return nil, fmt.Errorf("no freezer group: %w", err)
	}
	g, err := cgroup.Open(layout, rel)
	if err != nil {
		return nil, err
	}
	return g, nil
}
