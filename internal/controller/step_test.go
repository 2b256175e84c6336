package controller_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
	"unicode/utf8"

	"github.com/tenon-dev/tenon/internal/clock"
	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/controller/controllertest"
	"github.com/tenon-dev/tenon/internal/sandbox"
	"github.com/tenon-dev/tenon/internal/sandbox/fake"
	"github.com/tenon-dev/tenon/internal/trajectory"
)

// stepPolicy grants every action, once hold is closed when hold is set,
// and checks that each grant is handed back exactly once.
type stepPolicy struct {
	controllertest.Nop
	log  func(string)
	hold chan struct{}

	mu          sync.Mutex
	next        uint64
	outstanding map[uint64]bool
	dones, bad  int // ActionDone calls; of them, with a grant not outstanding
}

func (p *stepPolicy) Name() string { return "step-test" }

func (p *stepPolicy) ActionReady(ctx context.Context, _ *controller.Agent, _ *trajectory.Action) (controller.Grant, error) {
	if p.hold != nil {
		select {
		case <-p.hold:
		case <-ctx.Done():
			return controller.Grant{}, ctx.Err()
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.next++
	p.outstanding[p.next] = true
	return controller.Grant{ID: p.next, Charge: 100}, nil
}

func (p *stepPolicy) ActionDone(_ *controller.Agent, g controller.Grant, _ controller.Outcome) {
	p.mu.Lock()
	if !p.outstanding[g.ID] {
		p.bad++
	}
	delete(p.outstanding, g.ID)
	p.dones++
	p.mu.Unlock()
	p.log("ActionDone")
}

// checkGrants fails unless dones grants were handed back, each once, and
// none is outstanding.
func (p *stepPolicy) checkGrants(t *testing.T, dones int) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dones != dones || p.bad != 0 || len(p.outstanding) != 0 {
		t.Errorf("ActionDone %d times (%d with an unknown grant), %d grants outstanding; want %d, 0, 0",
			p.dones, p.bad, len(p.outstanding), dones)
	}
}

// stepSandboxes is the Resident manager with Boundary logged and failing
// with boundaryErr.
type stepSandboxes struct {
	*controller.Resident
	log         func(string)
	boundaryErr error
	// gate, when set, holds Boundary until it is closed (it then logs
	// "Boundary end"); logEnsure logs Ensure calls.
	gate      chan struct{}
	logEnsure bool
}

func (m *stepSandboxes) Boundary(context.Context, *controller.Agent, controller.Outcome) error {
	m.log("Boundary")
	if m.gate != nil {
		<-m.gate
		m.log("Boundary end")
	}
	return m.boundaryErr
}

func (m *stepSandboxes) Ensure(ctx context.Context, a *controller.Agent) (string, error) {
	if m.logEnsure {
		m.log("Ensure")
	}
	return m.Resident.Ensure(ctx, a)
}

// stepRig is a Step over the fake backend, a stepPolicy and a Resident
// manager. seq records, in order, the kinds of the events emitted and the
// hooks, policy and manager calls made.
type stepRig struct {
	be   *fake.Backend
	pol  *stepPolicy
	mgr  *stepSandboxes
	live controller.LiveSet
	step *controller.Step
	a    *controller.Agent

	mu     sync.Mutex
	seq    []string
	events []controller.Event
}

// newStepRig builds a rig whose first failCreates sandbox starts fail;
// with a negative failCreates, the first -failCreates fail for want of
// memory (as the process backend reports a cgroup mkdir's ENOMEM).
func newStepRig(t *testing.T, failCreates int) *stepRig {
	r := &stepRig{}
	creates := 0
	r.be = fake.New(fake.Options{CreateErr: func(sandbox.Spec) error {
		r.mu.Lock()
		defer r.mu.Unlock()
		creates++
		switch {
		case creates <= failCreates:
			return errors.New("no room")
		case creates <= -failCreates:
			return errors.New("unable to apply cgroup configuration: mkdir /sys/fs/cgroup/memory/d/sb: cannot allocate memory")
		}
		return nil
	}})
	t.Cleanup(func() { r.be.Close() })
	r.pol = &stepPolicy{log: r.log, outstanding: make(map[uint64]bool)}
	n := 0
	r.mgr = &stepSandboxes{log: r.log, Resident: controller.NewResident(controller.SandboxHost{
		Backend: r.be,
		Spec: func(*controller.Agent) sandbox.Spec {
			n++
			return sandbox.Spec{ID: fmt.Sprintf("sb-%d", n)}
		},
		Up:   r.live.Add,
		Down: func(_ *controller.Agent, id string) { r.live.Remove(id) },
	})}
	r.step = &controller.Step{
		Policy: r.pol, Sandboxes: r.mgr, Backend: r.be, Live: &r.live, Clock: clock.Real{},
		Logger: slog.New(slog.DiscardHandler),
		Emit: func(a *controller.Agent, e controller.Event) {
			r.mu.Lock()
			r.events = append(r.events, e)
			r.mu.Unlock()
			r.log(e.Kind)
		},
		StartRetries: 3, StartBackoff: time.Second,
	}
	r.a = &controller.Agent{ID: "w", Workflow: &trajectory.Workflow{ID: "w", Actions: []trajectory.Action{
		{Class: "bash", Command: "first", Run: "true"},
		{Class: "test", Command: "second", Run: "true"},
	}}, Next: 1}
	return r
}

func (r *stepRig) log(s string) {
	r.mu.Lock()
	r.seq = append(r.seq, s)
	r.mu.Unlock()
}

// action is a StepAction for shell command cmd whose hooks log to seq.
func (r *stepRig) action(cmd string, timeout time.Duration) controller.StepAction {
	return controller.StepAction{
		Index:    7,
		Request:  sandbox.ExecRequest{Shell: cmd, Timeout: timeout},
		Admitted: func(controller.Grant, time.Duration) { r.log("Admitted") },
		Running:  func(on bool) { r.log(fmt.Sprintf("Running(%v)", on)) },
		Done:     func(controller.Grant, controller.Outcome) { r.log("Done") },
	}
}

func (r *stepRig) sequence() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.seq)
}

// The sequence of a granted action up to Exec's return.
var stepRan = []string{"Admitted", "admit", "action_start", "Running(true)", "Running(false)", "action_done"}

func TestStepOutcomes(t *testing.T) {
	tests := []struct {
		name        string
		cmd         string
		timeout     time.Duration
		failCreates int
		wantErr     error // nil: success
		wantRetries int
		wantDur     time.Duration
		wantExit    int
		wantSeq     []string
	}{
		{name: "success", cmd: "sleep 2", wantDur: 2 * time.Second,
			wantSeq: append(slices.Clone(stepRan), "ActionDone", "Done", "Boundary")},
		{name: "non-zero exit goes on", cmd: "exit 3", wantExit: 3,
			wantSeq: append(slices.Clone(stepRan), "ActionDone", "Done", "Boundary")},
		{name: "oom", cmd: "oom", wantErr: controller.ErrOOM, wantExit: -1,
			wantSeq: append(slices.Clone(stepRan), "oom", "ActionDone", "Done")},
		{name: "timeout", cmd: "sleep 10", timeout: 3 * time.Second, wantErr: controller.ErrTimeout, wantDur: 3 * time.Second, wantExit: -1,
			wantSeq: append(slices.Clone(stepRan), "timeout", "ActionDone", "Done")},
		{name: "exec error loses the sandbox", cmd: "die", wantErr: sandbox.ErrSandboxDead, wantExit: -1,
			wantSeq: append(slices.Clone(stepRan), "sandbox_lost", "ActionDone", "Done")},
		{name: "failed starts are retried", cmd: "true", failCreates: 2, wantRetries: 2, wantDur: 2 * time.Second,
			wantSeq: append([]string{"error", "error"}, append(slices.Clone(stepRan), "ActionDone", "Done", "Boundary")...)},
		{name: "a start failing beyond the retries loses the sandbox", cmd: "true", failCreates: 4, wantErr: controller.ErrSandboxLost, wantRetries: 3, wantDur: 3 * time.Second,
			wantSeq: []string{"error", "error", "error", "sandbox_lost"}},
		{name: "a start refused for want of memory waits beyond the retries", cmd: "true", failCreates: -6, wantRetries: 6, wantDur: (1 + 2 + 4 + 8 + 8 + 8) * time.Second,
			wantSeq: append([]string{"error", "error", "error", "error", "error", "error"}, append(slices.Clone(stepRan), "ActionDone", "Done", "Boundary")...)},
		{name: "a start refused for want of memory for StarvedWait loses the sandbox", cmd: "true", failCreates: -1000, wantErr: controller.ErrSandboxLost,
			wantRetries: 78, wantDur: controller.DefaultStarvedWait + 7*time.Second,
			wantSeq: append(slices.Repeat([]string{"error"}, 78), "sandbox_lost")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newStepRig(t, tt.failCreates)
				start := time.Now()
				res, err := r.step.Run(context.Background(), r.a, r.action(tt.cmd, tt.timeout))
				if tt.wantErr == nil && err != nil || tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
					t.Fatalf("Run = %v, want %v", err, tt.wantErr)
				}
				if got := time.Since(start); got != tt.wantDur {
					t.Errorf("Run took %v, want %v", got, tt.wantDur)
				}
				if got := r.sequence(); !slices.Equal(got, tt.wantSeq) {
					t.Errorf("sequence\n got %v\nwant %v", got, tt.wantSeq)
				}
				if res.StartRetries != tt.wantRetries {
					t.Errorf("StartRetries = %d, want %d", res.StartRetries, tt.wantRetries)
				}
				admitted := tt.failCreates <= 3 && tt.failCreates > -1000
				if res.Admitted != admitted {
					t.Fatalf("Admitted = %v, want %v", res.Admitted, admitted)
				}
				if !admitted {
					r.pol.checkGrants(t, 0)
					return
				}
				r.pol.checkGrants(t, 1)
				o := res.Outcome
				if o.Index != 7 || o.Class != "test" || o.Sandbox != r.a.SandboxID || o.Exit != tt.wantExit || o.Queued != 0 {
					t.Errorf("Outcome = %+v, want index 7, class test, sandbox %q, exit %d, queued 0", o, r.a.SandboxID, tt.wantExit)
				}
				if fail := o.Failure(); tt.wantErr == nil && fail != nil || tt.wantErr != nil && !errors.Is(fail, tt.wantErr) {
					t.Errorf("Outcome.Failure = %v, want %v", fail, tt.wantErr)
				}
				for _, e := range r.events {
					if e.Kind != controller.EventError && (e.Workflow != "w" || e.Action == nil || *e.Action != 7 || e.Sandbox != o.Sandbox) {
						t.Errorf("%s event names workflow %q action %v sandbox %q, want w 7 %q", e.Kind, e.Workflow, e.Action, e.Sandbox, o.Sandbox)
					}
				}
			})
		})
	}
}

// TestStepCancelledWaitingForAdmission: an action whose wait ends before
// the policy grants it is not run and leaves no grant behind, whether ctx
// or only Wait (the daemon draining) ended.
func TestStepCancelledWaitingForAdmission(t *testing.T) {
	for _, onlyWait := range []bool{false, true} {
		t.Run(fmt.Sprintf("only Wait %v", onlyWait), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newStepRig(t, 0)
				r.pol.hold = make(chan struct{})
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				x := r.action("true", 0)
				if onlyWait {
					x.Wait = ctx
					ctx = context.Background()
				}
				res, err := r.step.Run(ctx, r.a, x)
				if !errors.Is(err, context.DeadlineExceeded) || res.Admitted {
					t.Errorf("Run = %v, admitted %v; want DeadlineExceeded, not admitted", err, res.Admitted)
				}
				if got := r.sequence(); len(got) != 0 {
					t.Errorf("sequence %v, want nothing", got)
				}
				r.pol.checkGrants(t, 0)
				if r.a.SandboxID == "" {
					t.Error("the sandbox Ensure started was dropped: the caller releases it")
				}
			})
		})
	}
}

// TestStepCancelledDuringExec: the grant of an action cancelled while it
// runs is handed back once; its failure is the cancellation and reported
// only with ReportCancelled.
func TestStepCancelledDuringExec(t *testing.T) {
	for _, report := range []bool{false, true} {
		t.Run(fmt.Sprintf("ReportCancelled %v", report), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newStepRig(t, 0)
				r.step.ReportCancelled = report
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				res, err := r.step.Run(ctx, r.a, r.action("sleep 100", 0))
				if !errors.Is(err, context.DeadlineExceeded) || !res.Admitted || res.Outcome.Err == nil {
					t.Errorf("Run = %v, admitted %v, exec err %v; want DeadlineExceeded, admitted, an exec error", err, res.Admitted, res.Outcome.Err)
				}
				want := append(slices.Clone(stepRan), "ActionDone", "Done")
				if report {
					want = append(slices.Clone(stepRan), "error", "ActionDone", "Done") // cancelled, not lost
				}
				if got := r.sequence(); !slices.Equal(got, want) {
					t.Errorf("sequence\n got %v\nwant %v", got, want)
				}
				if report {
					if e := r.events[len(r.events)-1]; e.Kind != controller.EventError || e.Reason != "action cancelled" {
						t.Errorf("last event %+v, want an error event with reason \"action cancelled\"", e)
					}
				}
				r.pol.checkGrants(t, 1)
			})
		})
	}
}

// TestStepBoundaryFailure: a manager that fails at the boundary keeps the
// sandbox; the action succeeds and the failure is an error event.
func TestStepBoundaryFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newStepRig(t, 0)
		r.mgr.boundaryErr = errors.New("capture failed")
		if _, err := r.step.Run(context.Background(), r.a, r.action("true", 0)); err != nil {
			t.Fatalf("Run = %v, want nil", err)
		}
		want := append(slices.Clone(stepRan), "ActionDone", "Done", "Boundary", "error")
		if got := r.sequence(); !slices.Equal(got, want) {
			t.Errorf("sequence\n got %v\nwant %v", got, want)
		}
		if e := r.events[len(r.events)-1]; e.Reason != "boundary" || e.Error != "capture failed" {
			t.Errorf("last event %+v, want the boundary error", e)
		}
	})
}

// TestStepAsyncBoundary: with AsyncBoundary, Run returns while the
// boundary still runs; the agent's next Run does not Ensure its sandbox
// until that boundary is done, and Settle waits for it too.
func TestStepAsyncBoundary(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newStepRig(t, 0)
		r.step.AsyncBoundary = true
		r.mgr.gate, r.mgr.logEnsure = make(chan struct{}), true
		if _, err := r.step.Run(context.Background(), r.a, r.action("true", 0)); err != nil {
			t.Fatalf("Run = %v, want nil", err)
		}
		synctest.Wait()
		want := append(append([]string{"Ensure"}, stepRan...), "ActionDone", "Done", "Boundary")
		if got := r.sequence(); !slices.Equal(got, want) {
			t.Fatalf("after the first Run\n got %v\nwant %v", got, want)
		}
		second := make(chan error, 1)
		go func() {
			_, err := r.step.Run(context.Background(), r.a, r.action("true", 0))
			second <- err
		}()
		synctest.Wait()
		if got := r.sequence(); !slices.Equal(got, want) {
			t.Fatalf("the second Run went on before the first boundary ended\n got %v\nwant %v", got, want)
		}
		close(r.mgr.gate)
		if err := <-second; err != nil {
			t.Fatalf("second Run = %v", err)
		}
		if err := r.step.Settle(context.Background(), r.a); err != nil {
			t.Fatalf("Settle = %v", err)
		}
		want = append(append(append(want, "Boundary end", "Ensure"), stepRan...), "ActionDone", "Done", "Boundary", "Boundary end")
		if got := r.sequence(); !slices.Equal(got, want) {
			t.Fatalf("sequence\n got %v\nwant %v", got, want)
		}
	})
}

// TestStepQueuedAndRunning: Outcome.Queued runs from Since, and the
// sandbox is marked running in the LiveSet exactly while Exec runs.
func TestStepQueuedAndRunning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newStepRig(t, 0)
		r.pol.hold = make(chan struct{})
		x := r.action("sleep 10", 0)
		x.Since = time.Now().Add(-time.Second)
		type result struct {
			res controller.StepResult
			err error
		}
		done := make(chan result)
		go func() {
			res, err := r.step.Run(context.Background(), r.a, x)
			done <- result{res, err}
		}()
		running := func() bool {
			l := r.live.List()
			return len(l) == 1 && l[0].Running
		}
		time.Sleep(2 * time.Second)
		if r.live.Len() != 1 || running() {
			t.Errorf("waiting for admission: live %v, want one sandbox not running", r.live.List())
		}
		close(r.pol.hold)
		time.Sleep(5 * time.Second)
		if !running() {
			t.Errorf("during Exec: live %v, want one sandbox running", r.live.List())
		}
		got := <-done
		if got.err != nil || got.res.Outcome.Queued != 3*time.Second || got.res.Outcome.Duration != 10*time.Second {
			t.Errorf("Run = %v, queued %v, duration %v; want nil, 3s, 10s", got.err, got.res.Outcome.Queued, got.res.Outcome.Duration)
		}
		if running() {
			t.Error("the sandbox is still marked running after Exec")
		}
		if e := r.events[0]; e.Kind != controller.EventAdmit || e.QueuedS != 3 || e.Charge != 100 {
			t.Errorf("first event %+v, want admit after 3 s charging 100", e)
		}
	})
}

// stallingSandboxes is stepSandboxes with the Staller capability logged.
type stallingSandboxes struct {
	*stepSandboxes
}

func (m stallingSandboxes) Stall(*controller.Agent) { m.log("Stall") }
func (m stallingSandboxes) Unstall(context.Context, *controller.Agent) error {
	m.log("Unstall")
	return nil
}

// TestStepStalls: with a Staller, Stall comes after the sandbox is ensured
// and before admission, Unstall after admission (also when the wait for
// admission is given up) and before the action runs.
func TestStepStalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newStepRig(t, 0)
		r.step.Sandboxes = stallingSandboxes{r.mgr}
		if _, err := r.step.Run(context.Background(), r.a, r.action("true", 0)); err != nil {
			t.Fatal(err)
		}
		want := append([]string{"Stall", "Unstall"}, append(slices.Clone(stepRan), "ActionDone", "Done", "Boundary")...)
		if got := r.sequence(); !slices.Equal(got, want) {
			t.Errorf("sequence = %v, want %v", got, want)
		}

		r = newStepRig(t, 0)
		r.pol.hold = make(chan struct{})
		r.step.Sandboxes = stallingSandboxes{r.mgr}
		wait, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		x := r.action("true", 0)
		x.Wait = wait
		if _, err := r.step.Run(context.Background(), r.a, x); err == nil {
			t.Fatal("Run with admission never granted succeeded")
		}
		if got, want := r.sequence(), []string{"Stall", "Unstall"}; !slices.Equal(got, want) {
			t.Errorf("given up: sequence = %v, want %v", got, want)
		}
	})
}

// stderrBackend gives every action that exits non-zero a stderr line.
type stderrBackend struct{ sandbox.Backend }

func (b stderrBackend) Exec(ctx context.Context, id string, req sandbox.ExecRequest) (sandbox.ExecResult, error) {
	r, err := b.Backend.Exec(ctx, id, req)
	if r.ExitCode != 0 {
		r.Stderr = []byte("line one\nboom: " + req.Shell + "\n")
	}
	return r, err
}

// TestStepStderrTail: action_done carries the end of a failed action's
// stderr, and nothing for one that succeeded.
func TestStepStderrTail(t *testing.T) {
	for cmd, want := range map[string]string{"exit 3": "line one\nboom: exit 3", "true": ""} {
		synctest.Test(t, func(t *testing.T) {
			r := newStepRig(t, 0)
			r.step.Backend = stderrBackend{r.be}
			if _, err := r.step.Run(context.Background(), r.a, r.action(cmd, 0)); err != nil {
				t.Fatal(err)
			}
			for _, e := range r.events {
				if e.Kind == controller.EventActionDone && e.StderrTail != want {
					t.Errorf("%s: action_done stderr_tail %q, want %q", cmd, e.StderrTail, want)
				}
			}
		})
	}
}

func TestStderrTail(t *testing.T) {
	long := strings.Repeat("x", 300) + "é" + strings.Repeat("y", 10) + "\n"
	got := controller.StderrTail([]byte(long))
	if len(got) > controller.StderrTailBytes || !strings.HasSuffix(got, "é"+strings.Repeat("y", 10)) || !utf8.ValidString(got) {
		t.Errorf("StderrTail(301 x, é, 10 y) = %q (%d bytes), want the last %d bytes, valid UTF-8, no newline", got, len(got), controller.StderrTailBytes)
	}
	cut := "é" + strings.Repeat("a", controller.StderrTailBytes-1) // the cut falls inside é
	if got := controller.StderrTail([]byte(cut)); !utf8.ValidString(got) || got != strings.Repeat("a", controller.StderrTailBytes-1) {
		t.Errorf("StderrTail cut inside a rune = %q, want valid UTF-8", got)
	}
	if got := controller.StderrTail(nil); got != "" {
		t.Errorf("StderrTail(nil) = %q", got)
	}
}
