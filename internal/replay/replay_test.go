package replay

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/sandbox/fake"
	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/units"
)

// memWF is a workflow of mem actions with the given peaks (MiB), each
// ramping 1 s and holding 4 s after a 2 s model wait.
func memWF(id string, arrival float64, peaks ...float64) trajectory.Workflow {
	w := trajectory.Workflow{Version: trajectory.Version, ID: id, Arrival: arrival}
	for i, p := range peaks {
		w.Actions = append(w.Actions, trajectory.Action{
			Wait: 2, Class: "test", Command: fmt.Sprintf("pytest %s/%d", id, i),
			Mem: &trajectory.MemProfile{PeakMiB: p, RampS: 1, HoldS: 4},
		})
	}
	return w
}

// runWF is a workflow of shell actions for the fake's tiny shell.
func runWF(id string, cmds ...string) trajectory.Workflow {
	w := trajectory.Workflow{Version: trajectory.Version, ID: id}
	for _, c := range cmds {
		w.Actions = append(w.Actions, trajectory.Action{Wait: 1, Class: "bash", Command: c, Run: c})
	}
	return w
}

// burst is four workflows arriving together whose peaks do not fit a
// 1 GiB budget together but each fits alone.
func burst() []trajectory.Workflow {
	return []trajectory.Workflow{
		memWF("w0", 0, 100, 600, 100),
		memWF("w1", 0, 100, 600, 100),
		memWF("w2", 0, 100, 600, 100),
		memWF("w3", 0.5, 100, 600, 100),
	}
}

// stallLimit bounds a test replay in (synctest) virtual time.
const stallLimit = 30 * time.Minute

// replay runs wfs on a fake backend with a 1 GiB budget inside a synctest
// bubble and returns the result and the decoded event log. newPolicy runs
// inside the bubble, so the policy's channels belong to it.
func replay(t *testing.T, newPolicy func(t *testing.T) controller.Policy, wfs []trajectory.Workflow, mod func(*Config)) (*Result, []controller.Event, *fake.Backend) {
	t.Helper()
	var (
		res *Result
		log bytes.Buffer
		be  *fake.Backend
	)
	synctest.Test(t, func(t *testing.T) {
		be = fake.New(fake.Options{Budget: units.GiB, SandboxBytes: 10 * units.MiB})
		defer be.Close()
		cfg := Config{
			Workflows: wfs, Backend: be, Policy: newPolicy(t), Budget: units.GiB, Domain: be,
			TimeScale: 0.1, EventLog: &log, SandboxPrefix: "tenon-test-replay",
		}
		if mod != nil {
			mod(&cfg)
		}
		// A policy that stalls is cut off after stallLimit of virtual time
		// instead of hanging the test; its workflows then end failed.
		ctx, cancel := context.WithTimeout(context.Background(), stallLimit)
		defer cancel()
		var err error
		res, err = Run(ctx, cfg)
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	})
	return res, decode(t, &log), be
}

func decode(t *testing.T, b *bytes.Buffer) []controller.Event {
	t.Helper()
	var out []controller.Event
	sc := bufio.NewScanner(b)
	for sc.Scan() {
		var e controller.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("event log line %q: %v", sc.Text(), err)
		}
		out = append(out, e)
	}
	return out
}

func count(evs []controller.Event, kind string) int {
	n := 0
	for _, e := range evs {
		if e.Kind == kind {
			n++
		}
	}
	return n
}

// checkAccounting asserts the invariants every run must keep.
func checkAccounting(t *testing.T, res *Result, evs []controller.Event, nwf int, be *fake.Backend) {
	t.Helper()
	if len(res.Workflows) != nwf {
		t.Fatalf("%d workflow results, want %d", len(res.Workflows), nwf)
	}
	if res.Completed+res.Failed != nwf {
		t.Errorf("completed %d + failed %d != %d workflows", res.Completed, res.Failed, nwf)
	}
	if got := count(evs, controller.EventWorkflowDone) + count(evs, controller.EventWorkflowFailed); got != nwf {
		t.Errorf("%d workflow_done/failed events, want %d", got, nwf)
	}
	if got := count(evs, controller.EventSubmit); got != nwf {
		t.Errorf("%d submit events, want %d", got, nwf)
	}
	if got := count(evs, controller.EventAgentStart); got != res.Attempts {
		t.Errorf("%d agent_start events, want %d attempts", got, res.Attempts)
	}
	if got := count(evs, controller.EventRetry); got != res.Attempts-nwf+countNotStarted(res) {
		t.Errorf("%d retry events, want attempts %d - workflows %d", got, res.Attempts, nwf)
	}
	// Cut-off runs (stalled policies) also fail attempts by cancellation.
	if got, want := res.FailedAttempts, res.OOMEvents+res.Timeouts+res.Lost+res.Preempted; got != want && res.Makespan < stallLimit {
		t.Errorf("failed attempts %d != oom %d + timeouts %d + lost %d + preempted %d", got, res.OOMEvents, res.Timeouts, res.Lost, res.Preempted)
	}
	if got := count(evs, controller.EventOOM); got != res.OOMEvents {
		t.Errorf("%d oom events, Result says %d", got, res.OOMEvents)
	}
	if got := count(evs, controller.EventActionDone); got != res.Actions {
		t.Errorf("%d action_done events, Result says %d actions", got, res.Actions)
	}
	if c, d := count(evs, controller.EventSandboxCreate), count(evs, controller.EventSandboxDestroy); c != d {
		t.Errorf("%d sandboxes created, %d destroyed", c, d)
	}
	for _, w := range res.Workflows {
		if w.Completed == (w.Err != "") {
			t.Errorf("workflow %s: completed=%v err=%q", w.ID, w.Completed, w.Err)
		}
		if w.Completed && w.Attempts != 1+w.OOMs+w.Timeouts+w.Lost+w.Preempted {
			t.Errorf("workflow %s: %d attempts, %d failures", w.ID, w.Attempts, w.OOMs+w.Timeouts+w.Lost+w.Preempted)
		}
		if w.Latency != w.End-w.Submit || w.End > res.Makespan {
			t.Errorf("workflow %s: latency %v end %v submit %v makespan %v", w.ID, w.Latency, w.End, w.Submit, res.Makespan)
		}
	}
	if be != nil {
		if live := be.Live(); len(live) != 0 {
			t.Errorf("sandboxes left behind: %v", live)
		}
	}
}

// countNotStarted is how many workflows never started an attempt.
func countNotStarted(res *Result) int {
	n := 0
	for _, w := range res.Workflows {
		if w.Attempts == 0 {
			n++
		}
	}
	return n
}

func mustStatic(t *testing.T, n int) controller.Policy {
	t.Helper()
	return mustPolicy(t, fmt.Sprintf("static-%d", n))
}

func TestEagerVersusStatic(t *testing.T) {
	tests := []struct {
		name     string
		policy   func(t *testing.T) controller.Policy
		wantOOM  bool
		wantDone int
	}{
		{name: "eager OOMs and retries", policy: func(t *testing.T) controller.Policy { return mustPolicy(t, "eager") }, wantOOM: true},
		{name: "static-1 never OOMs", policy: func(t *testing.T) controller.Policy { return mustStatic(t, 1) }, wantDone: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, evs, be := replay(t, tt.policy, burst(), nil)
			checkAccounting(t, res, evs, 4, be)
			t.Logf("%s: makespan %v attempts %d failed %d oom %d completed %d peak %d MiB",
				res.Policy, res.Makespan, res.Attempts, res.FailedAttempts, res.OOMEvents, res.Completed, res.PeakBytes/units.MiB)
			if got := res.OOMEvents > 0; got != tt.wantOOM {
				t.Errorf("OOM events = %d, want any: %v", res.OOMEvents, tt.wantOOM)
			}
			if tt.wantOOM && count(evs, controller.EventRetry) == 0 {
				t.Error("no retry events after OOMs")
			}
			if tt.wantDone > 0 && res.Completed != tt.wantDone {
				t.Errorf("completed = %d, want %d", res.Completed, tt.wantDone)
			}
			if res.PeakBytes > units.GiB || res.PeakBytes == 0 {
				t.Errorf("peak = %d, want in (0, budget]", res.PeakBytes)
			}
			if len(res.Samples) < 10 {
				t.Errorf("%d samples, want a sample every 100 ms", len(res.Samples))
			}
		})
	}
}
