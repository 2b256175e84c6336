package bench

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tenon-dev/tenon/internal/units"
)

// writeRun writes one AgentCgroup run, dir/<task>/attempt_1/, in the layout
// agentcgroup.Import reads: memory samples one second apart (peakMiB in
// the middle) and two tool calls.
func writeRun(t *testing.T, dir, task string, peakMiB int) {
	t.Helper()
	run := filepath.Join(dir, task, "attempt_1")
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}
	var samples []string
	for i, mib := range []int{100, 100, 100 + peakMiB, 100 + peakMiB, 110, 110} {
		samples = append(samples, fmt.Sprintf(`{"epoch": %d, "mem_usage": "%dMiB / 8GiB", "cpu_percent": "1%%"}`, 1700000000+i, mib))
	}
	files := map[string]string{
		"resources.json": `{"samples": [` + strings.Join(samples, ",") + `]}`,
		"tool_calls.json": `[
 {"timestamp": "2023-11-14T22:13:20.500Z", "end_timestamp": "2023-11-14T22:13:20.600Z", "tool": "Read", "id": "a", "input": {"file_path": "x.py"}},
 {"timestamp": "2023-11-14T22:13:21.500Z", "end_timestamp": "2023-11-14T22:13:23.500Z", "tool": "Bash", "id": "b", "input": {"command": "pytest"}}
]`,
		"results.json": `{"image": "example/` + task + `:1"}`,
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(run, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// fakeTraces is a traces directory with two sets (b-set of two runs, a-set
// of one), a README and a directory without runs.
func fakeTraces(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	writeRun(t, filepath.Join(dir, "b-set"), "task1", 300)
	writeRun(t, filepath.Join(dir, "b-set"), "task2", 1500)
	writeRun(t, filepath.Join(dir, "a-set"), "task3", 200)
	if err := os.Mkdir(filepath.Join(dir, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("traces\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestTracesGroup(t *testing.T) {
	sets, err := LoadTraceSets(fakeTraces(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(sets) != 2 || sets[0].Name != "a-set" || len(sets[0].Workflows) != 1 || sets[1].Name != "b-set" || len(sets[1].Workflows) != 2 {
		t.Fatalf("sets %+v, want a-set (1 run) and b-set (2 runs)", sets)
	}
	m := DefaultMatrix()
	m.TraceSets = sets
	m.Only = []string{GroupTraces}
	cs, err := m.Cases()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range cs {
		names = append(names, c.Name)
		if c.Group != GroupTraces || !slices.Equal(c.Policies, CorePolicies) || c.Reps != 3 {
			t.Errorf("%s: group %s policies %v reps %d", c.Name, c.Group, c.Policies, c.Reps)
		}
		set := sets[0]
		if c.Workload == "b-set" {
			set = sets[1]
		}
		if len(c.Workflows) != TraceCopies*len(set.Workflows) {
			t.Errorf("%s: %d workflows, want %d copies of %d", c.Name, len(c.Workflows), TraceCopies, len(set.Workflows))
		}
		last := c.Workflows[len(c.Workflows)-1]
		if !strings.HasSuffix(last.ID, "-r1") || last.Image != "" || last.Arrival != float64(len(set.Workflows)-1)*0.5+30 {
			t.Errorf("%s: last workflow %s image %q arrival %g", c.Name, last.ID, last.Image, last.Arrival)
		}
		if want := TracesTimeScale(c.Workflows, m.TimeScale, m.TracesLength); c.TimeScale != want {
			t.Errorf("%s: time scale %g, want %g", c.Name, c.TimeScale, want)
		}
	}
	want := []string{"traces/a-set/1GiB", "traces/a-set/2GiB", "traces/b-set/1GiB", "traces/b-set/2GiB"}
	if !slices.Equal(names, want) {
		t.Errorf("cases %v, want %v", names, want)
	}
	// b-set's 1.5 GiB action cannot fit 1 GiB: the case keeps the
	// workflow, which the replay reports as infeasible.
	if cs[2].Budget != units.GiB || len(cs[2].Workflows) != 4 || cs[2].Workflows[1].Feasible(units.GiB) == nil {
		t.Errorf("%s: %d workflows; the 1.5 GiB one should be there and infeasible", cs[2].Name, len(cs[2].Workflows))
	}
}

func TestTracesGroupNotByDefault(t *testing.T) {
	cs, err := DefaultMatrix().Cases() // no trace set: the default matrix does not need one
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		if c.Group == GroupTraces {
			t.Errorf("default matrix runs %s", c.Name)
		}
	}
	m := DefaultMatrix()
	m.Only = []string{GroupTraces}
	if _, err := m.Cases(); !errors.Is(err, ErrNoTraces) {
		t.Errorf("traces group without trace sets: %v, want ErrNoTraces", err)
	}
}

// TestLoadTraceSetsLinked: a set linked in from elsewhere is imported; a
// dangling link and a link to a file are skipped.
func TestLoadTraceSetsLinked(t *testing.T) {
	src := t.TempDir()
	writeRun(t, filepath.Join(src, "real"), "task1", 300)
	if err := os.WriteFile(filepath.Join(src, "file"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, target := range map[string]string{"linked-set": filepath.Join(src, "real"), "dangling": filepath.Join(src, "gone"), "to-file": filepath.Join(src, "file")} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	sets, err := LoadTraceSets(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(sets) != 1 || sets[0].Name != "linked-set" || len(sets[0].Workflows) != 1 {
		t.Fatalf("sets %+v, want linked-set alone with one workflow", sets)
	}
}

func TestLoadTraceSetsMissing(t *testing.T) {
	tests := []struct {
		name string
		dir  func(t *testing.T) string
		want string
	}{
		{"missing directory", func(t *testing.T) string { return filepath.Join(t.TempDir(), "traces") }, "does not exist"},
		{"no trace set", func(t *testing.T) string { return t.TempDir() }, "holds no trace set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := tt.dir(t)
			_, err := LoadTraceSets(dir)
			if !errors.Is(err, ErrNoTraces) || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want ErrNoTraces naming %s and saying %q", err, dir, tt.want)
			}
		})
	}
}
