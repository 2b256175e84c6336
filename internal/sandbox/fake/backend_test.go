package fake

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tenon-dev/tenon/internal/memtool"
	"github.com/tenon-dev/tenon/internal/sandbox"
	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/units"
)

func memReq(p trajectory.MemProfile) sandbox.ExecRequest {
	return sandbox.ExecRequest{Argv: append([]string{"/usr/local/bin/tenon"}, memtool.Args(p)...)}
}

func TestExecMem(t *testing.T) {
	tests := []struct {
		name       string
		budget     int64
		held       int64 // charged by another sandbox first
		profile    trajectory.MemProfile
		timeout    time.Duration
		wantOOM    bool
		wantTO     bool
		wantDur    time.Duration
		wantPeak   int64
		wantResid  int64 // sandbox memory after the action
		wantDomain int64 // domain usage after the action, every sandbox
	}{
		{name: "fits", budget: 1 * units.GiB, profile: trajectory.MemProfile{PeakMiB: 100, RampS: 1, HoldS: 2},
			wantDur: 3 * time.Second, wantPeak: 100 * units.MiB},
		{name: "background retains", budget: 1 * units.GiB, profile: trajectory.MemProfile{PeakMiB: 100, RampS: 1, HoldS: 1, RetainMiB: 30, RetainS: 1, Background: true, FilesMiB: 10},
			wantDur: 3 * time.Second, wantPeak: 100 * units.MiB, wantResid: 40 * units.MiB, wantDomain: 40 * units.MiB},
		{name: "over budget is OOM-killed", budget: 150 * units.MiB, held: 100 * units.MiB, profile: trajectory.MemProfile{PeakMiB: 100, RampS: 1, HoldS: 2},
			wantOOM: true, wantDur: time.Second, wantDomain: 100 * units.MiB},
		{name: "unlimited never OOMs", held: 10 * units.GiB, profile: trajectory.MemProfile{PeakMiB: 100, RampS: 1, HoldS: 2},
			wantDur: 3 * time.Second, wantPeak: 100 * units.MiB, wantDomain: 10 * units.GiB},
		{name: "timeout", budget: 1 * units.GiB, profile: trajectory.MemProfile{PeakMiB: 100, RampS: 1, HoldS: 10}, timeout: 2 * time.Second,
			wantTO: true, wantDur: 2 * time.Second, wantPeak: 100 * units.MiB},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := context.Background()
				b := New(Options{Budget: tt.budget})
				defer b.Close()
				if tt.held > 0 {
					if _, err := b.Create(ctx, sandbox.Spec{ID: "other"}); err != nil {
						t.Fatal(err)
					}
					if _, err := b.Exec(ctx, "other", memReq(trajectory.MemProfile{PeakMiB: float64(tt.held / units.MiB), RetainMiB: float64(tt.held / units.MiB), Background: true})); err != nil {
						t.Fatal(err)
					}
				}
				if _, err := b.Create(ctx, sandbox.Spec{ID: "sb"}); err != nil {
					t.Fatal(err)
				}
				req := memReq(tt.profile)
				req.Timeout = tt.timeout
				res, err := b.Exec(ctx, "sb", req)
				if err != nil {
					t.Fatalf("Exec: %v", err)
				}
				if res.OOMKilled != tt.wantOOM || res.TimedOut != tt.wantTO {
					t.Errorf("OOMKilled=%v TimedOut=%v, want %v %v", res.OOMKilled, res.TimedOut, tt.wantOOM, tt.wantTO)
				}
				if res.Duration != tt.wantDur {
					t.Errorf("Duration = %v, want %v", res.Duration, tt.wantDur)
				}
				if res.PeakMemory != tt.wantPeak {
					t.Errorf("PeakMemory = %d, want %d", res.PeakMemory, tt.wantPeak)
				}
				st, err := b.Stats(ctx, "sb")
				if err != nil {
					t.Fatal(err)
				}
				if st.Memory != tt.wantResid {
					t.Errorf("sandbox memory = %d, want %d", st.Memory, tt.wantResid)
				}
				if u, _ := b.Usage(); u != tt.wantDomain {
					t.Errorf("domain usage = %d, want %d", u, tt.wantDomain)
				}
				// A second, small action's peak is measured during it only.
				if !tt.wantOOM && !tt.wantTO {
					res, err := b.Exec(ctx, "sb", memReq(trajectory.MemProfile{PeakMiB: 1, HoldS: 1}))
					if err != nil {
						t.Fatal(err)
					}
					if want := tt.wantResid + units.MiB; res.PeakMemory != want {
						t.Errorf("second action peak = %d, want %d", res.PeakMemory, want)
					}
				}
				if err := b.Destroy(ctx, "sb"); err != nil {
					t.Fatal(err)
				}
				if u, _ := b.Usage(); u != tt.held {
					t.Errorf("domain usage after destroy = %d, want %d", u, tt.held)
				}
			})
		})
	}
}

func TestExecShell(t *testing.T) {
	tests := []struct {
		name     string
		cmd      string
		wantExit int
		wantOOM  bool
		wantErr  error
		wantDur  time.Duration
	}{
		{name: "true", cmd: "true"},
		{name: "false", cmd: "false", wantExit: 1},
		{name: "exit", cmd: "exit 3", wantExit: 3},
		{name: "sleep", cmd: "sleep 1.5", wantDur: 1500 * time.Millisecond},
		{name: "oom", cmd: "oom", wantExit: -1, wantOOM: true},
		{name: "die", cmd: "die", wantExit: -1, wantErr: sandbox.ErrSandboxDead},
		{name: "anything else", cmd: "pytest -x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := context.Background()
				b := New(Options{})
				defer b.Close()
				if _, err := b.Create(ctx, sandbox.Spec{ID: "sb"}); err != nil {
					t.Fatal(err)
				}
				res, err := b.Exec(ctx, "sb", sandbox.ExecRequest{Shell: tt.cmd})
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				if res.ExitCode != tt.wantExit || res.OOMKilled != tt.wantOOM || res.Duration != tt.wantDur {
					t.Errorf("got exit %d oom %v dur %v, want %d %v %v", res.ExitCode, res.OOMKilled, res.Duration, tt.wantExit, tt.wantOOM, tt.wantDur)
				}
			})
		})
	}
}

func TestPauseStopsTheClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		b := New(Options{})
		defer b.Close()
		if _, err := b.Create(ctx, sandbox.Spec{ID: "sb"}); err != nil {
			t.Fatal(err)
		}
		done := make(chan sandbox.ExecResult)
		go func() {
			res, _ := b.Exec(ctx, "sb", sandbox.ExecRequest{Shell: "sleep 2"})
			done <- res
		}()
		time.Sleep(time.Second)
		if err := b.Pause(ctx, "sb"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Second)
		if err := b.Resume(ctx, "sb"); err != nil {
			t.Fatal(err)
		}
		res := <-done
		if want := 7 * time.Second; res.Duration != want {
			t.Errorf("Duration = %v, want %v (2 s of work + 5 s paused)", res.Duration, want)
		}
		if st, err := b.Stats(ctx, "sb"); err != nil || st.CPU != 2*time.Second {
			t.Errorf("CPU = %v (%v), want 2s: only unpaused time burns CPU", st.CPU, err)
		}
	})
}

func TestLifecycleErrors(t *testing.T) {
	ctx := context.Background()
	b := New(Options{CreateErr: func(s sandbox.Spec) error {
		if s.ID == "bad" {
			return errors.New("boom")
		}
		return nil
	}})
	if _, err := b.Create(ctx, sandbox.Spec{ID: "bad"}); err == nil {
		t.Error("Create(bad) succeeded, want the CreateErr error")
	}
	if _, err := b.Create(ctx, sandbox.Spec{ID: "a"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Create(ctx, sandbox.Spec{ID: "a"}); !errors.Is(err, sandbox.ErrExists) {
		t.Errorf("second Create err = %v, want ErrExists", err)
	}
	if _, err := b.Exec(ctx, "a", sandbox.ExecRequest{}); !errors.Is(err, sandbox.ErrInvalidSpec) {
		t.Errorf("empty Exec err = %v, want ErrInvalidSpec", err)
	}
	if _, err := b.Exec(ctx, "nope", sandbox.ExecRequest{Shell: "true"}); !errors.Is(err, sandbox.ErrNotFound) {
		t.Errorf("Exec(nope) err = %v, want ErrNotFound", err)
	}
	if err := b.Destroy(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if err := b.Destroy(ctx, "a"); err != nil {
		t.Errorf("second Destroy err = %v, want nil", err)
	}
	if c := b.Counters(); c.Created != 1 || c.Destroyed != 1 {
		t.Errorf("Counters = %+v, want 1 created and 1 destroyed", c)
	}
}
