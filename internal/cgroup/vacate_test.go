package cgroup

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestVacate(t *testing.T) {
	tests := []struct {
		name     string
		procs    string // the group's own cgroup.procs
		forks    int    // tasks the group gains during the first moves
		wantLeaf string // the leaf's cgroup.procs afterwards
		wantErr  bool
	}{
		{"moves every task", "10\n11\n", 0, "10\n11\n", false},
		{"empty group", "", 0, "", false},
		{"moves tasks forked meanwhile", "10\n", 1, "10\n20\n", false},
		{"gives up on tasks that keep coming", "10\n", 1000, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := fakeV2(t)
			k := newFakeKernel(t)
			g := mustCreate(t, l, "dom/sb")
			own := filepath.Join(g.dirs[Memory], "cgroup.procs")
			leaf := filepath.Join(g.dirs[Memory], "init", "cgroup.procs")
			writeFiles(t, g.dirs[Memory], map[string]string{"cgroup.procs": tt.procs})
			writeFiles(t, filepath.Join(g.dirs[Memory], "init"), map[string]string{"cgroup.procs": ""})
			var moved []string
			forks := tt.forks
			k.onWrite = func(p, v string) (string, error) {
				if p != leaf {
					return v, nil
				}
				// The kernel moves the task: it leaves the group.
				moved = append(moved, v)
				next := ""
				if forks > 0 {
					forks--
					next = "20\n"
				}
				writeFiles(t, g.dirs[Memory], map[string]string{"cgroup.procs": next})
				return strings.Join(moved, "\n") + "\n", nil
			}
			err := Vacate(l, "dom/sb", "init")
			if (err != nil) != tt.wantErr {
				t.Fatalf("Vacate: %v, want error %v", err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			if got := readFile(t, leaf); got != strings.TrimSpace(tt.wantLeaf) {
				t.Errorf("leaf cgroup.procs = %q, want %q", got, tt.wantLeaf)
			}
			if got := readFile(t, own); got != "" {
				t.Errorf("group's own cgroup.procs = %q, want empty", got)
			}
		})
	}
}

func TestVacateV1DoesNothing(t *testing.T) {
	l := fakeV1(t)
	k := newFakeKernel(t)
	mustCreate(t, l, "dom/sb")
	if err := Vacate(l, "dom/sb", "init"); err != nil {
		t.Fatal(err)
	}
	if len(k.writes) != 0 {
		t.Errorf("Vacate on v1 wrote %q", k.writes)
	}
}
