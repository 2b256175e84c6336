package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/cgroup"
	"github.com/tenon-dev/tenon/internal/cgroup/cgrouptest"
	"github.com/tenon-dev/tenon/internal/report"
	"github.com/tenon-dev/tenon/internal/units"
)

// TestMain lets the test binary stand in for the tenon binary inside
// sandboxes: the process backend re-executes it as the sandbox init, and
// mem actions run `tenon tool mem` through it.
func TestMain(m *testing.M) {
	maybeRunInternal()
	if len(os.Args) > 1 && os.Args[1] == "tool" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestLiveBenchQuick runs `tenon bench --quick` end to end on the process
// backend: every workflow is accounted for under every policy, the results
// files are written, and tenon completes every workflow with no OOM kill
// (issue 7), where Eager is killed.
func TestLiveBenchQuick(t *testing.T) {
	layout := cgrouptest.Live(t, "live bench test")
	if m, _ := layout.Controller(cgroup.Memory); m.Version != cgroup.V1 {
		t.Skip("live bench test needs the cgroup v1 memory controller")
	}
	domain := fmt.Sprintf("tenon-test-bench-%d", os.Getpid())
	t.Cleanup(func() { // the run removes its domain; this catches a failed teardown
		if _, err := cgroup.Open(layout, domain); err != nil {
			return
		}
		t.Errorf("bench left its workload domain %s behind", domain)
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		dom, err := cgroup.OpenDomain(ctx, layout, domain, units.GiB, slog.New(slog.DiscardHandler)) // adopts and empties it
		if err == nil {
			err = dom.Close(ctx)
		}
		if err != nil {
			t.Errorf("removing leftover domain %s: %v", domain, err)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out := t.TempDir()
	env := newTestEnv()
	err := runBench(ctx, &env.cliEnv, []string{"--quick", "--json", "--name", "quick",
		"--out-dir", out, "--state-dir", t.TempDir(), "--domain", domain})
	if err != nil {
		t.Fatalf("tenon bench --quick: %v\n%s", err, tail(env.errOut.String(), 2000))
	}
	var doc struct {
		Results []report.Metrics `json:"results"`
		Partial bool             `json:"partial"`
		Cases   []struct {
			Name  string `json:"name"`
			Error string `json:"error"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(env.out.Bytes(), &doc); err != nil {
		t.Fatalf("decoding --json output: %v", err)
	}
	if doc.Partial || len(doc.Cases) != 1 || doc.Cases[0].Error != "" {
		t.Fatalf("partial %v, cases %+v", doc.Partial, doc.Cases)
	}
	seen := map[string]report.Metrics{}
	for _, m := range doc.Results {
		seen[m.Policy] = m
		if m.Workflows == 0 || m.Completed+m.Failed != m.Workflows {
			t.Errorf("%s: completed %d + failed %d != %d workflows", m.Policy, m.Completed, m.Failed, m.Workflows)
		}
		t.Logf("%s: makespan %v (run %.1f s), %d/%d completed, %d OOM kills, %d timeouts", m.Policy, m.MakespanS, m.RunS, m.Completed, m.Workflows, m.OOMEvents, m.Timeouts)
	}
	for _, p := range []string{"eager", "tenon"} {
		if _, ok := seen[p]; !ok {
			t.Errorf("no result for %s", p)
		}
	}
	eager, tenon := seen["eager"], seen["tenon"]
	if tenon.Completed != tenon.Workflows {
		t.Errorf("tenon completed %d of %d workflows on the quick case, want all", tenon.Completed, tenon.Workflows)
	}
	if tenon.OOMEvents != 0 {
		t.Errorf("tenon had %d OOM kills on the quick case, want 0", tenon.OOMEvents)
	}
	// The case must oversubscribe enough to matter: without control the
	// same workload is killed.
	if eager.OOMEvents == 0 {
		t.Errorf("eager had no OOM kill on the quick case: the case no longer tests anything")
	}
	for _, f := range []string{"quick.md", "quick.json", "quick-workloads.png"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("results file %s: %v", f, err)
		}
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
