package replay

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/live"
	"github.com/tenon-dev/tenon/internal/policy"
	"github.com/tenon-dev/tenon/internal/sandbox"
	"github.com/tenon-dev/tenon/internal/sandbox/fake"
	"github.com/tenon-dev/tenon/internal/trajectory"
)

func eager(t *testing.T) controller.Policy { return mustPolicy(t, "eager") }

// mustPolicy builds a registered policy on the live adapter.
func mustPolicy(t *testing.T, name string) controller.Policy {
	t.Helper()
	p, err := live.Build(name, policy.Options{Budget: 1 << 30}, live.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestAttemptOutcomes(t *testing.T) {
	tests := []struct {
		name          string
		wf            trajectory.Workflow
		mod           func(*Config)
		wantAttempts  int
		wantCompleted bool
		wantOOM       int
		wantTimeouts  int
		wantLost      int
		wantNonZero   int
		wantKind      string // an event kind that must appear
	}{
		{name: "clean", wf: runWF("w", "true", "sleep 1"), wantAttempts: 1, wantCompleted: true, wantKind: controller.EventWorkflowDone},
		{name: "non-zero exit does not fail", wf: runWF("w", "false", "exit 2", "true"), wantAttempts: 1, wantCompleted: true, wantNonZero: 2},
		{name: "always OOM gives up after 5 retries", wf: runWF("w", "true", "oom"), wantAttempts: 6, wantOOM: 6, wantKind: controller.EventWorkflowFailed},
		{name: "retries configurable", wf: runWF("w", "oom"), mod: func(c *Config) { c.MaxRetries = 2 }, wantAttempts: 3, wantOOM: 3},
		{name: "no retries", wf: runWF("w", "oom"), mod: func(c *Config) { c.MaxRetries = -1 }, wantAttempts: 1, wantOOM: 1},
		{name: "timeout fails the attempt", wf: runWF("w", "sleep 10"), mod: func(c *Config) { c.ActionTimeout = time.Second; c.MaxRetries = 1 },
			wantAttempts: 2, wantTimeouts: 2, wantKind: controller.EventTimeout},
		{name: "dead sandbox is lost", wf: runWF("w", "die"), mod: func(c *Config) { c.MaxRetries = 1 }, wantAttempts: 2, wantLost: 2, wantKind: controller.EventSandboxLost},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, evs, be := replay(t, eager, []trajectory.Workflow{tt.wf}, tt.mod)
			checkAccounting(t, res, evs, 1, be)
			w := res.Workflows[0]
			if w.Attempts != tt.wantAttempts || w.Completed != tt.wantCompleted {
				t.Errorf("attempts %d completed %v, want %d %v (err %q)", w.Attempts, w.Completed, tt.wantAttempts, tt.wantCompleted, w.Err)
			}
			if w.OOMs != tt.wantOOM || w.Timeouts != tt.wantTimeouts || w.Lost != tt.wantLost || w.NonZeroExits != tt.wantNonZero {
				t.Errorf("oom %d timeouts %d lost %d nonzero %d, want %d %d %d %d",
					w.OOMs, w.Timeouts, w.Lost, w.NonZeroExits, tt.wantOOM, tt.wantTimeouts, tt.wantLost, tt.wantNonZero)
			}
			if tt.wantKind != "" && count(evs, tt.wantKind) == 0 {
				t.Errorf("no %s event", tt.wantKind)
			}
		})
	}
}

func TestCreateFailureIsRetried(t *testing.T) {
	var (
		res *Result
		mu  sync.Mutex
		n   int
	)
	synctest.Test(t, func(t *testing.T) {
		be := fake.New(fake.Options{CreateErr: func(sandbox.Spec) error {
			mu.Lock()
			defer mu.Unlock()
			n++
			if n <= 2 {
				return errors.New("no room")
			}
			return nil
		}})
		defer be.Close()
		var err error
		res, err = Run(context.Background(), Config{Workflows: []trajectory.Workflow{runWF("w", "true")}, Backend: be, Policy: mustPolicy(t, "eager")})
		if err != nil {
			t.Fatal(err)
		}
	})
	// Two failed starts are retried within the first attempt: no attempt
	// is lost to them.
	w := res.Workflows[0]
	if !w.Completed || w.Attempts != 1 || w.Lost != 0 || w.StartRetries != 2 {
		t.Errorf("completed %v attempts %d lost %d start retries %d, want true 1 0 2", w.Completed, w.Attempts, w.Lost, w.StartRetries)
	}
}

// TestCreateFailureBeyondRetriesIsLost: a start that keeps failing loses
// the attempt after startRetries retries.
func TestCreateFailureBeyondRetriesIsLost(t *testing.T) {
	var res *Result
	synctest.Test(t, func(t *testing.T) {
		be := fake.New(fake.Options{CreateErr: func(sandbox.Spec) error { return errors.New("no room") }})
		defer be.Close()
		var err error
		res, err = Run(context.Background(), Config{Workflows: []trajectory.Workflow{runWF("w", "true")}, Backend: be, Policy: mustPolicy(t, "eager"), MaxRetries: 1})
		if err != nil {
			t.Fatal(err)
		}
	})
	w := res.Workflows[0]
	if w.Completed || w.Attempts != 2 || w.Lost != 2 || w.StartRetries != 2*startRetries {
		t.Errorf("completed %v attempts %d lost %d start retries %d, want false 2 2 %d", w.Completed, w.Attempts, w.Lost, w.StartRetries, 2*startRetries)
	}
	if res.Interrupted {
		t.Error("a run whose workflow failed on its own is marked interrupted")
	}
}

func TestCancelAccountsForEveryWorkflow(t *testing.T) {
	var res *Result
	synctest.Test(t, func(t *testing.T) {
		be := fake.New(fake.Options{})
		defer be.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		wfs := []trajectory.Workflow{runWF("a", "sleep 100"), runWF("b", "true"), memWF("late", 50, 10)}
		p := mustPolicy(t, "static-1")
		var err error
		res, err = Run(ctx, Config{Workflows: wfs, Backend: be, Policy: p, Domain: be})
		if err != nil {
			t.Fatal(err)
		}
		if live := be.Live(); len(live) != 0 {
			t.Errorf("sandboxes left behind: %v", live)
		}
	})
	if res.Completed+res.Failed != 3 || res.Failed < 2 {
		t.Errorf("completed %d failed %d, want 3 in all and at least 2 failed", res.Completed, res.Failed)
	}
	if !res.Interrupted {
		t.Error("a run its context cut is not marked interrupted")
	}
	if res.Makespan > 4*time.Second {
		t.Errorf("makespan %v: cancellation did not end the run promptly", res.Makespan)
	}
}

func TestTimeScale(t *testing.T) {
	tests := []struct {
		name  string
		scale float64
		want  time.Duration
	}{
		// arrival 10 + wait 2 + ramp 1 + hold 4 = 17 s
		{name: "real time", scale: 1, want: 17 * time.Second},
		{name: "ten times faster", scale: 0.1, want: 1700 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, _, _ := replay(t, eager, []trajectory.Workflow{memWF("w", 10, 100)}, func(c *Config) { c.TimeScale = tt.scale })
			if res.Makespan != tt.want {
				t.Errorf("makespan = %v, want %v", res.Makespan, tt.want)
			}
			if w := res.Workflows[0]; w.Latency != tt.want-time.Duration(10*tt.scale*float64(time.Second)) {
				t.Errorf("latency = %v, want makespan minus the scaled arrival", w.Latency)
			}
		})
	}
}

func TestProgress(t *testing.T) {
	var calls [][2]int
	replay(t, eager, burst(), func(c *Config) {
		c.Progress = func(done, total int) { calls = append(calls, [2]int{done, total}) }
	})
	if len(calls) != 5 {
		t.Fatalf("%d progress calls, want 5: %v", len(calls), calls)
	}
	for i, c := range calls {
		if c != [2]int{i, 4} {
			t.Errorf("call %d = %v, want [%d 4]", i, c, i)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	be := fake.New(fake.Options{})
	good := runWF("w", "true")
	bad := runWF("x", "true")
	bad.Version = 99
	tests := []struct {
		name string
		cfg  Config
	}{
		{name: "no backend", cfg: Config{Policy: mustPolicy(t, "eager")}},
		{name: "no policy", cfg: Config{Backend: be}},
		{name: "negative scale", cfg: Config{Backend: be, Policy: mustPolicy(t, "eager"), TimeScale: -1}},
		{name: "duplicate ids", cfg: Config{Backend: be, Policy: mustPolicy(t, "eager"), Workflows: []trajectory.Workflow{good, good}}},
		{name: "invalid workflow", cfg: Config{Backend: be, Policy: mustPolicy(t, "eager"), Workflows: []trajectory.Workflow{bad}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Run(context.Background(), tt.cfg); !errors.Is(err, ErrConfig) {
				t.Errorf("err = %v, want ErrConfig", err)
			}
		})
	}
}

// TestInfeasibleWorkflowIsNotStarted: a workflow whose profile peaks above
// the budget is reported infeasible with no attempt, not as retried OOM
// kills; the feasible one runs.
func TestInfeasibleWorkflowIsNotStarted(t *testing.T) {
	var res *Result
	synctest.Test(t, func(t *testing.T) {
		be := fake.New(fake.Options{Budget: 1 << 30})
		defer be.Close()
		p, err := live.Build("eager", policy.Options{Budget: 1 << 30}, live.Options{})
		if err != nil {
			t.Fatal(err)
		}
		wfs := []trajectory.Workflow{memWF("big", 0, 2000), memWF("small", 0, 100)}
		res, err = Run(context.Background(), Config{Workflows: wfs, Backend: be, Policy: p, Budget: 1 << 30, Domain: be})
		if err != nil {
			t.Fatal(err)
		}
	})
	big, small := res.Workflows[0], res.Workflows[1]
	if !big.Infeasible || big.Attempts != 0 || big.Completed || !strings.Contains(big.Err, "cannot fit the budget") {
		t.Errorf("big: %+v", big)
	}
	if !small.Completed || small.Infeasible {
		t.Errorf("small: %+v", small)
	}
	if res.Infeasible != 1 || res.Failed != 0 || res.OOMEvents != 0 || res.Completed != 1 {
		t.Errorf("infeasible %d failed %d OOM %d completed %d, want 1 0 0 1", res.Infeasible, res.Failed, res.OOMEvents, res.Completed)
	}
}
