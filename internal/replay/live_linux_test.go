//go:build linux

package replay

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/cgroup"
	"github.com/tenon-dev/tenon/internal/cgroup/cgrouptest"
	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/disk"
	"github.com/tenon-dev/tenon/internal/live"
	"github.com/tenon-dev/tenon/internal/memtool"
	"github.com/tenon-dev/tenon/internal/policy"
	"github.com/tenon-dev/tenon/internal/sandbox/process"
	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/units"
)

// TestMain serves the process backend's sandbox init and, since the test
// binary is /usr/local/bin/tenon inside a sandbox, `tenon tool mem`.
func TestMain(m *testing.M) {
	process.MaybeInit()
	memtool.MaybeServe()
	os.Exit(m.Run())
}

// liveLayout skips unless the test runs as root with a cgroup memory
// controller (v1, or v2 as in internal/vmtest's guest).
func liveLayout(t *testing.T) *cgroup.Layout {
	t.Helper()
	return cgrouptest.Live(t, "live replay test")
}

// liveWorkload is four workflows arriving together, each with two mem
// actions; the 220 MiB peaks of all four do not fit a 512 MiB domain, one
// at a time does.
func liveWorkload() []trajectory.Workflow {
	var wfs []trajectory.Workflow
	for i := range 4 {
		w := trajectory.Workflow{Version: trajectory.Version, ID: fmt.Sprintf("live-%d", i)}
		for j, peak := range []float64{220, 60} {
			w.Actions = append(w.Actions, trajectory.Action{
				Wait: 0.2, Class: "test", Command: fmt.Sprintf("python step%d.py", j),
				Mem: &trajectory.MemProfile{PeakMiB: peak, RampS: 0.3, HoldS: 0.8},
			})
		}
		wfs = append(wfs, w)
	}
	return wfs
}

func TestLiveEagerVersusStatic(t *testing.T) {
	layout := liveLayout(t)
	const budget = 512 * units.MiB
	tests := []struct {
		name    string
		policy  string
		wantOOM bool
	}{
		{name: "eager OOMs and retries", policy: "eager", wantOOM: true},
		{name: "static-1 never OOMs", policy: "static-1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wfs := liveWorkload()
			res := liveRun(t, layout, budget, tt.policy, wfs, 0)
			if got := res.OOMEvents > 0; got != tt.wantOOM {
				t.Errorf("OOM events = %d, want any: %v", res.OOMEvents, tt.wantOOM)
			}
			if tt.wantOOM && res.Attempts <= len(wfs) {
				t.Errorf("%d attempts for %d workflows: OOMs were not retried", res.Attempts, len(wfs))
			}
			if !tt.wantOOM && res.Completed != len(wfs) {
				t.Errorf("completed %d of %d", res.Completed, len(wfs))
			}
		})
	}
}

// liveRun replays wfs under the named policy in a fresh workload domain of
// the given budget on the process backend, checks the invariants every
// live replay must keep (every workflow accounted for, failures add up,
// peak within the budget, events written) and returns the result.
func liveRun(t *testing.T, layout *cgroup.Layout, budget int64, policyName string, wfs []trajectory.Workflow, maxRetries int) *Result {
	t.Helper()
	return liveRunWith(t, layout, budget, policyName, nil, wfs, maxRetries)
}

// liveRunWith is liveRun with policy parameters (policy.Options.Params,
// e.g. hold=off).
func liveRunWith(t *testing.T, layout *cgroup.Layout, budget int64, policyName string, params map[string]string, wfs []trajectory.Workflow, maxRetries int) *Result {
	t.Helper()
	res, _ := liveRunOpts(t, layout, budget, policyName, wfs, maxRetries, liveOpts{params: params})
	return res
}

// liveOpts are liveRunOpts's options beyond the workload and budget.
type liveOpts struct {
	params map[string]string // policy.Options.Params
	pacing *live.Pacing      // the gate's pacing actuator; nil: the freezer
	events io.Writer         // receives the event log too
}

// liveRunOpts is liveRun with options; it returns the policy too, for its
// counters.
func liveRunOpts(t *testing.T, layout *cgroup.Layout, budget int64, policyName string, wfs []trajectory.Workflow, maxRetries int, o liveOpts) (*Result, *live.Policy) {
	t.Helper()
	params := o.params
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)
	name := fmt.Sprintf("tenon-test-replay-%d", os.Getpid())
	dom := cgrouptest.Domain(t, layout, name, budget)
	// As internal/app does: on v2 each sandbox is kept out of swap and an
	// OOM kill takes the whole sandbox (memory.oom.group).
	v2 := false
	if m, _ := layout.Controller(cgroup.Memory); m.Version == cgroup.V2 {
		v2 = true
	} else {
		noSwap(t, dom)
	}
	pcfg := process.Config{StateDir: t.TempDir(), CgroupParent: dom.Group().Path(), Layout: layout, Logger: log, NoSwap: v2, OOMGroup: v2}
	if err := disk.Check(); err != nil { // as internal/app: run without
		t.Logf("per-sandbox disk limits off: %v", err)
		pcfg.DiskMax = -1
	}
	be, err := process.New(pcfg)
	if err != nil {
		t.Skipf("process backend not available: %v", err)
	}
	t.Cleanup(func() {
		if err := be.Close(); err != nil {
			t.Errorf("closing backend: %v", err)
		}
	})
	p, err := live.Build(policyName, policy.Options{Budget: budget, Params: params, Workflows: wfs}, live.Options{Pacing: o.pacing})
	if err != nil {
		t.Fatal(err)
	}
	var events countingWriter
	tail := &tailWriter{max: 120}
	var eventLog io.Writer = io.MultiWriter(&events, tail)
	if o.events != nil {
		eventLog = io.MultiWriter(&events, tail, o.events)
	}
	// A live test that fails on a machine other than the author's
	// (CI's) shows what the policy decided before it.
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the event log's last %d lines:\n%s", tail.max, tail)
		}
	})
	res, err := Run(ctx, Config{
		Workflows: wfs, Backend: be, Policy: p, Budget: budget, Domain: CgroupDomain{Domain: dom},
		MaxRetries: maxRetries, ActionTimeout: liveActionTimeout, SandboxPrefix: name, WorkspaceRoot: t.TempDir(),
		EventLog: eventLog, Logger: log,
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	hs := p.Machine().HoldStats()
	t.Logf("%s %v: makespan %.1fs attempts %d failed %d oom %d timeouts %d lost %d preempted %d rolled back %d completed %d/%d peak %s; OOM hold armed %v: %d waits, %d resolved, %d released, %d preempted, %.1fs held, %d sandboxes frozen by it, %d resting ones thawed",
		res.Policy, params, res.Makespan.Seconds(), res.Attempts, res.FailedAttempts, res.OOMEvents, res.Timeouts, res.Lost, res.Preempted, res.RolledBack,
		res.Completed, len(wfs), units.FormatSize(res.PeakBytes), p.Machine().HoldArmed(), hs.Holds, hs.Resolved, hs.Released, hs.Preempted, hs.Held.Seconds(), hs.Froze, hs.Thawed)
	if res.Completed+res.Failed != len(wfs) || len(res.Workflows) != len(wfs) {
		t.Errorf("completed %d + failed %d != %d workflows", res.Completed, res.Failed, len(wfs))
	}
	if res.FailedAttempts != res.OOMEvents+res.Timeouts+res.Lost+res.Preempted {
		t.Errorf("failed attempts %d != oom %d + timeouts %d + lost %d + preempted %d", res.FailedAttempts, res.OOMEvents, res.Timeouts, res.Lost, res.Preempted)
	}
	if res.PeakBytes == 0 || res.PeakBytes > budget+units.MiB {
		t.Errorf("peak %s, want in (0, budget]", units.FormatSize(res.PeakBytes))
	}
	if events.n == 0 {
		t.Error("empty event log")
	}
	return res, p
}

// liveActionTimeout bounds each action of a live replay: far above what
// the tests' actions take on a host, since in internal/vmtest's emulated
// guest on a busy machine a 400 MiB ramp has taken over 20 s.
const liveActionTimeout = 2 * time.Minute

// noSwap keeps the domain out of swap (Domain.DisableSwap), as seed 000
// §5.1 runs the workload domain without swap: with a swap device active
// (another test may enable zram) cgroup reclaim would swap instead of
// OOM-killing.
func noSwap(t *testing.T, dom *cgroup.Domain) {
	t.Helper()
	if err := dom.DisableSwap(); err != nil {
		t.Skipf("live replay test needs memory.swappiness to disable swap in the domain: %v", err)
	}
}

// tailWriter keeps the last max lines written but the gate's samples
// (ten a second).
type tailWriter struct {
	max     int
	lines   []string
	partial string
}

func (w *tailWriter) Write(p []byte) (int, error) {
	parts := strings.Split(w.partial+string(p), "\n")
	w.partial = parts[len(parts)-1]
	for _, l := range parts[:len(parts)-1] {
		if !strings.Contains(l, `"kind":"sample"`) {
			w.lines = append(w.lines, l)
		}
	}
	if len(w.lines) > w.max {
		w.lines = append(w.lines[:0], w.lines[len(w.lines)-w.max:]...)
	}
	return len(p), nil
}

func (w *tailWriter) String() string {
	return strings.Join(append(w.lines, w.partial), "\n")
}

// countingWriter counts bytes written.
type countingWriter struct{ n int }

func (w *countingWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }

var _ controller.Domain = CgroupDomain{}
