package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/census"
	"github.com/tenon-dev/tenon/internal/census/swarm"
)

// TestCensusNoSiblings: targets that match nothing fail before sampling.
func TestCensusNoSiblings(t *testing.T) {
	if _, err := os.Stat("/proc/self/cgroup"); err != nil {
		t.Skipf("census needs /proc/self/cgroup to find the cgroup hierarchies: %v", err)
	}
	_, err := Census(context.Background(), CensusConfig{Samples: 1})
	if !errors.Is(err, swarm.ErrNoSiblings) {
		t.Fatalf("Census with no targets: %v, want swarm.ErrNoSiblings", err)
	}
}

// TestCensusLivePid censuses one bare process: one sample of one sibling,
// labelled, and the progress lines naming it unfrozen and the sample.
func TestCensusLivePid(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("live census test needs root (/proc/PID/pagemap frame numbers, /proc/kpageflags)")
	}
	if _, err := os.Stat("/proc/kpageflags"); err != nil {
		t.Skipf("live census test needs /proc/kpageflags: %v", err)
	}
	child := exec.Command("sleep", "60")
	if err := child.Start(); err != nil {
		t.Skipf("live census test needs a child process (sleep): %v", err)
	}
	defer func() {
		_ = child.Process.Kill()
		_ = child.Wait()
	}()
	var progress strings.Builder
	res, err := Census(context.Background(), CensusConfig{Pids: []int{child.Process.Pid}, Samples: 1,
		Label: "one", FreezeTimeout: 10 * time.Second, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].N != 1 || res[0].Config != "one" || res[0].RealBytes <= 0 {
		t.Errorf("results %+v, want one sample of one sibling labelled one with resident memory", res)
	}
	want := []string{fmt.Sprintf("tenon census: sampling unfrozen: pid-%d\n", child.Process.Pid), "sample 1/1: "}
	for _, w := range want {
		if !strings.Contains(progress.String(), w) {
			t.Errorf("progress %q lacks %q", progress.String(), w)
		}
	}
}

// TestCensusSwarmBadInput: a bad configuration or schedule fails before
// anything is installed, prepared or launched, and returns no report.
func TestCensusSwarmBadInput(t *testing.T) {
	tests := []struct {
		name    string
		cfg     CensusSwarmConfig
		wantErr string
	}{
		{"unknown configuration", CensusSwarmConfig{Sizes: []int{2}, Configs: []string{"bogus"}, TimeScale: 1}, "unknown configuration"},
		{"zero time scale", CensusSwarmConfig{Sizes: []int{2}, TimeScale: 0}, "time scale must be > 0"},
		{"negative time scale", CensusSwarmConfig{Sizes: []int{2}, Configs: []string{"copied"}, TimeScale: -1}, "time scale must be > 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			work := t.TempDir()
			tt.cfg.WorkDir, tt.cfg.CacheDir = work, work
			rep, err := CensusSwarm(context.Background(), tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %v, want one containing %q", err, tt.wantErr)
			}
			if rep != nil {
				t.Errorf("report %+v, want none", rep)
			}
			if entries, _ := os.ReadDir(work); len(entries) != 0 {
				t.Errorf("work directory holds %d entries, want none", len(entries))
			}
		})
	}
}

// TestRunSwarms runs the size × configuration matrix through a stand-in
// for swarm.Run: runs in order, a failed run recorded with its error and
// the others going on, samples of the successful ones collected.
func TestRunSwarms(t *testing.T) {
	errBoom := errors.New("boom")
	tests := []struct {
		name      string
		fail      string // "config-n" that fails
		cancelAt  int    // cancel the context during this run (1-based), 0: never
		wantRuns  []string
		wantErr   error
		wantSamps int
	}{
		{name: "all succeed", wantRuns: []string{"copied-2", "sandbox-2", "copied-3", "sandbox-3"}, wantSamps: 4},
		{name: "one fails", fail: "sandbox-2", wantRuns: []string{"copied-2", "sandbox-2!", "copied-3", "sandbox-3"}, wantErr: errBoom, wantSamps: 3},
		{name: "cancelled", cancelAt: 2, wantRuns: []string{"copied-2", "sandbox-2"}, wantErr: context.Canceled, wantSamps: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			rep := &SwarmReport{}
			calls := 0
			var progress strings.Builder
			err := runSwarms(ctx, rep, []int{2, 3}, []swarm.Config{swarm.Copied, swarm.Sandbox},
				func(c swarm.Config, n int) (*swarm.Result, error) {
					calls++
					if calls == tt.cancelAt {
						cancel()
					}
					if fmt.Sprintf("%s-%d", c, n) == tt.fail {
						return nil, errBoom
					}
					return &swarm.Result{Samples: []census.SampleResult{{N: n, Config: string(c)}}}, nil
				}, &progress)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Errorf("error %v, want %v", err, tt.wantErr)
			}
			var runs []string
			for _, r := range rep.Runs {
				s := fmt.Sprintf("%s-%d", r.Config, r.N)
				if r.Error != "" {
					s += "!"
				}
				runs = append(runs, s)
			}
			if strings.Join(runs, " ") != strings.Join(tt.wantRuns, " ") {
				t.Errorf("runs %v, want %v", runs, tt.wantRuns)
			}
			if len(rep.Samples) != tt.wantSamps {
				t.Errorf("%d samples, want %d", len(rep.Samples), tt.wantSamps)
			}
			if tt.fail != "" && !strings.Contains(progress.String(), "tenon census swarm: sandbox N=2: boom\n") {
				t.Errorf("progress %q lacks the failed run", progress.String())
			}
		})
	}
}
