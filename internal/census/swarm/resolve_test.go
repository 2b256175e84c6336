package swarm

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tenon-dev/tenon/internal/cgroup"
)

// fakeTree builds v1 memory and freezer hierarchies with the given groups
// (relative paths); groups in noFreezer exist only in memory.
func fakeTree(t *testing.T, groups []string, noFreezer ...string) *cgroup.Layout {
	t.Helper()
	root := t.TempDir()
	l := &cgroup.Layout{Controllers: map[string]cgroup.Mount{
		cgroup.Memory:  {Version: cgroup.V1, Root: filepath.Join(root, "memory")},
		cgroup.Freezer: {Version: cgroup.V1, Root: filepath.Join(root, "freezer")},
	}}
	for _, h := range []string{"memory", "freezer"} {
		for _, g := range append([]string{""}, groups...) {
			if h == "freezer" && slices.Contains(noFreezer, g) {
				continue
			}
			d := filepath.Join(root, h, g)
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(d, "cgroup.procs"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			if h == "freezer" {
				if err := os.WriteFile(filepath.Join(d, "freezer.state"), []byte("THAWED\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	return l
}

func names(r Resolved) []string {
	var out []string
	for _, s := range r.Siblings {
		out = append(out, s.Name)
	}
	return out
}

func TestResolve(t *testing.T) {
	groups := []string{"tenon", "tenon/sb-1", "tenon/sb-2", "tenon/sb-2/inner", "other", "other/x"}
	l := fakeTree(t, groups, "tenon/sb-2", "tenon/sb-2/inner")
	mem := l.Controllers[cgroup.Memory].Root
	frz := l.Controllers[cgroup.Freezer].Root
	tests := []struct {
		name         string
		targets      Targets
		wantNames    []string
		wantFreezers int
		wantUnfrozen []string
		wantErr      error
	}{
		{name: "absolute glob", targets: Targets{Cgroups: []string{filepath.Join(mem, "tenon", "sb-*")}},
			wantNames: []string{"tenon/sb-1", "tenon/sb-2"}, wantFreezers: 1, wantUnfrozen: []string{"tenon/sb-2"}},
		{name: "relative to memory root", targets: Targets{Cgroups: []string{"tenon/sb-1"}},
			wantNames: []string{"tenon/sb-1"}, wantFreezers: 1},
		{name: "freezer hierarchy path", targets: Targets{Cgroups: []string{filepath.Join(frz, "tenon", "sb-1")}},
			wantNames: []string{"tenon/sb-1"}, wantFreezers: 1},
		{name: "domain children only", targets: Targets{Domain: "tenon"},
			wantNames: []string{"tenon/sb-1", "tenon/sb-2"}, wantFreezers: 1, wantUnfrozen: []string{"tenon/sb-2"}},
		{name: "duplicates folded", targets: Targets{Cgroups: []string{"tenon/sb-1", filepath.Join(mem, "tenon/sb-1")}, Domain: "tenon"},
			wantNames: []string{"tenon/sb-1", "tenon/sb-2"}, wantFreezers: 1, wantUnfrozen: []string{"tenon/sb-2"}},
		{name: "pids", targets: Targets{Pids: []int{7, 9}},
			wantNames: []string{"pid-7", "pid-9"}, wantUnfrozen: []string{"pid-7", "pid-9"}},
		{name: "no match", targets: Targets{Cgroups: []string{"nope/*"}}, wantErr: ErrNotCgroup},
		{name: "hierarchy root", targets: Targets{Cgroups: []string{mem}}, wantErr: ErrNotCgroup},
		{name: "outside cgroups", targets: Targets{Cgroups: []string{t.TempDir()}}, wantErr: ErrNotCgroup},
		{name: "nothing", targets: Targets{}, wantErr: ErrNoSiblings},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Resolve(l, tt.targets, nil)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(names(got), tt.wantNames) {
				t.Errorf("siblings = %v, want %v", names(got), tt.wantNames)
			}
			if len(got.Freezers) != tt.wantFreezers {
				t.Errorf("%d freezers, want %d", len(got.Freezers), tt.wantFreezers)
			}
			if !slices.Equal(got.Unfrozen, tt.wantUnfrozen) {
				t.Errorf("unfrozen = %v, want %v", got.Unfrozen, tt.wantUnfrozen)
			}
			for _, s := range got.Siblings {
				for _, d := range s.Cgroups {
					if !isCgroupDir(d) {
						t.Errorf("sibling %s: %s is not a cgroup dir", s.Name, d)
					}
				}
			}
		})
	}
}
