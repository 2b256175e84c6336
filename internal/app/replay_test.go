package app

import (
	"bufio"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/replay"
	"github.com/tenon-dev/tenon/internal/sandbox"
	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/units"
	"github.com/tenon-dev/tenon/internal/workload"
)

// testWorkflows is a small generated workload; replayed at testScale on
// the fake backend it takes well under a second per policy.
func testWorkflows(t *testing.T, n int) []trajectory.Workflow {
	t.Helper()
	wfs, err := workload.Generate("swe", n, 1, workload.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return wfs
}

const testScale = 0.001

// TestReplay replays two policies on the fake backend: one result per
// policy in order, the event log written, no run directory left.
func TestReplay(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	events := filepath.Join(t.TempDir(), "events.jsonl")
	c, err := Replay(context.Background(), ReplayConfig{
		Workflows: testWorkflows(t, 3), Policies: []string{"eager", "static-2"}, Budget: units.GiB,
		Backend: "fake", StateDir: state, TimeScale: testScale, EventLog: events,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Results) != 2 || c.Results[0].Policy != "eager" || c.Results[1].Policy != "static-2" {
		t.Fatalf("results %+v, want eager then static-2", c.Results)
	}
	for _, m := range c.Results {
		if m.Workflows != 3 || m.Completed+m.Failed != 3 {
			t.Errorf("%s: %d completed + %d failed of %d workflows, want 3", m.Policy, m.Completed, m.Failed, m.Workflows)
		}
	}
	entries, err := os.ReadDir(state)
	if err != nil || len(entries) != 0 {
		t.Errorf("state directory holds %d entries (%v), want its run directories removed", len(entries), err)
	}
	f, err := os.Open(events)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	policies := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		for _, p := range []string{"eager", "static-2"} {
			if strings.Contains(sc.Text(), `"policy":"`+p+`"`) {
				policies[p] = true
			}
		}
	}
	if len(policies) != 2 {
		t.Errorf("event log has events of %v, want both policies", policies)
	}
}

// TestReplayInterrupted: a policy run the context cuts is left out of the
// comparison (its workflows failed by the interrupt are not its numbers),
// and no policy starts after it.
func TestReplayInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// At full time scale the workload takes minutes; the cancel comes
	// while the first policy runs.
	time.AfterFunc(300*time.Millisecond, cancel)
	state := filepath.Join(t.TempDir(), "state")
	events := filepath.Join(t.TempDir(), "events.jsonl")
	c, err := Replay(ctx, ReplayConfig{
		Workflows: testWorkflows(t, 3), Policies: []string{"eager", "static-2"}, Budget: units.GiB,
		Backend: "fake", StateDir: state, TimeScale: 1, EventLog: events,
	})
	if err == nil || !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "interrupted") {
		t.Errorf("Replay cut by its context: error %v, want it interrupted (context canceled)", err)
	}
	if c != nil {
		t.Errorf("Replay cut in its first policy returned %d results (%+v), want none", len(c.Results), c.Results)
	}
	if b, err := os.ReadFile(events); err != nil || strings.Contains(string(b), `"policy":"static-2"`) {
		t.Errorf("event log (%v): static-2 started after the interrupt", err)
	}
}

// TestReplayBadInput: a bad policy, parameter or backend fails before
// anything is created.
func TestReplayBadInput(t *testing.T) {
	tests := []struct {
		name     string
		policies []string
		params   map[string]string
		backend  string
		budget   int64
		want     string
	}{
		{"no policy", nil, nil, "fake", units.GiB, "no policy"},
		{"unknown policy", []string{"eager", "tenno"}, nil, "fake", units.GiB, `"tenno"`},
		{"bad static N", []string{"static-x"}, nil, "fake", units.GiB, "static-x"},
		{"unknown parameter", []string{"tenon"}, map[string]string{"speed": "11"}, "fake", units.GiB, "speed"},
		{"unknown backend", []string{"eager"}, nil, "xen", units.GiB, `unknown backend "xen"`},
		{"no budget", []string{"eager"}, nil, "fake", 0, "--budget must be positive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			state, events := filepath.Join(dir, "state"), filepath.Join(dir, "events.jsonl")
			c, err := Replay(context.Background(), ReplayConfig{
				Workflows: testWorkflows(t, 2), Policies: tt.policies, Params: tt.params, Budget: tt.budget,
				Backend: tt.backend, StateDir: state, TimeScale: testScale, EventLog: events,
			})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want one with %q", err, tt.want)
			}
			if c != nil {
				t.Errorf("a comparison %+v from a replay that could not start", c)
			}
			if tt.backend == "fake" && tt.budget > 0 {
				// Policy errors come before any file is made.
				for _, p := range []string{state, events} {
					if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
						t.Errorf("%s exists after a bad policy (%v)", p, err)
					}
				}
			}
		})
	}
}

// TestBuildRuns: each policy is built once, with its own run directory
// under the state directory, which is not made before the replay.
func TestBuildRuns(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	cfg := ReplayConfig{Workflows: testWorkflows(t, 4), Budget: units.GiB, StateDir: state, TimeScale: testScale}
	runs, err := cfg.buildRuns([]string{"eager", "tenon", "static-3"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	dirs := map[string]bool{}
	for i, r := range runs {
		if want := []string{"eager", "tenon", "static-3"}[i]; r.pol.Name() != want {
			t.Errorf("run %d is %s, want %s", i, r.pol.Name(), want)
		}
		if filepath.Dir(r.dir) != state || dirs[r.dir] {
			t.Errorf("run directory %s: want a fresh one under %s", r.dir, state)
		}
		dirs[r.dir] = true
	}
	if _, err := os.Stat(state); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("building the policies made the state directory (%v)", err)
	}
}

// TestActionTimeout: the replays and simulations of the CLI get
// replay.DefaultActionTimeout unless told otherwise; negative is none.
func TestActionTimeout(t *testing.T) {
	wfs, err := workload.Generate("swe", 4, 1, workload.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		d     time.Duration
		scale float64
		want  time.Duration
	}{
		{name: "default at the time scale", d: 0, scale: 0.5, want: replay.DefaultActionTimeout(wfs, 0.5)},
		{name: "default at real time", d: 0, scale: 1, want: replay.DefaultActionTimeout(wfs, 1)},
		{name: "none", d: -1, scale: 1, want: 0},
		{name: "given", d: 90 * time.Second, scale: 0.5, want: 90 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := actionTimeout(tt.d, wfs, tt.scale); got != tt.want || (tt.d == 0 && got < replay.MinActionTimeout) {
				t.Errorf("actionTimeout(%v) = %v, want %v", tt.d, got, tt.want)
			}
		})
	}
}

// TestReplayImages: the process backend refuses, before any work, a
// workflow naming an image it lacks, and the error names --image;
// OverrideImage replaces every image without touching its input.
func TestReplayImages(t *testing.T) {
	wfs := testWorkflows(t, 3)
	wfs[1].Image = "swerebench/sweb.eval.x86_64.example-1"
	state := filepath.Join(t.TempDir(), "state")
	_, err := Replay(context.Background(), ReplayConfig{
		Workflows: wfs, Policies: []string{"eager"}, Budget: units.GiB, Backend: "process", StateDir: state, TimeScale: testScale,
	})
	if !errors.Is(err, sandbox.ErrUnsupportedImage) || !strings.Contains(err.Error(), "--image host") || !strings.Contains(err.Error(), wfs[1].ID) {
		t.Fatalf("err %v; want ErrUnsupportedImage naming the workflow and --image host", err)
	}
	if _, err := os.Stat(state); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("state directory made before the image check (%v)", err)
	}
	host, n := OverrideImage(wfs, "host")
	if n != 1 || wfs[1].Image == "host" {
		t.Fatalf("replaced %d named images (want 1); input changed: %q", n, wfs[1].Image)
	}
	for _, w := range host {
		if w.Image != "host" {
			t.Errorf("workflow %s image %q after the override", w.ID, w.Image)
		}
	}
	if _, err := checkImages("process", state, host); err != nil {
		t.Errorf("overridden workflows refused: %v", err)
	}
	// An image of the state directory's image store is accepted.
	records := filepath.Join(imageStoreDir(state), "images")
	if err := os.MkdirAll(records, 0o700); err != nil {
		t.Fatal(err)
	}
	rec := `{"id":"sha256:` + strings.Repeat("ab", 32) + `","names":["` + wfs[1].Image + `"],"layers":[]}`
	if err := os.WriteFile(filepath.Join(records, strings.Repeat("ab", 32)+".json"), []byte(rec), 0o600); err != nil {
		t.Fatal(err)
	}
	pinned, err := checkImages("process", state, wfs)
	if err != nil {
		t.Errorf("an imported image refused: %v", err)
	}
	if want := wfs[1].Image + "@sha256:" + strings.Repeat("ab", 32); pinned[1].Image != want || pinned[0].Image != wfs[0].Image {
		t.Errorf("pinned images %q, %q; want %q and %q unchanged", pinned[1].Image, pinned[0].Image, want, wfs[0].Image)
	}
	if wfs[1].Image == pinned[1].Image {
		t.Error("checkImages changed its input")
	}
	if _, err := checkImages("docker", state, wfs); err != nil {
		t.Errorf("docker refused an image up front: %v", err)
	}
}
