//go:build linux

package live

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/cgroup/cgrouptest"
	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/sandbox"
	"github.com/tenon-dev/tenon/internal/schedext/schedexttest"
)

// TestLivePacingActuator is the gate's pacing actuator end to end on the
// process backend: a sandbox runs an action that grows as fast as it can;
// the actuator denies it (paces it, through sched_ext or the cgroup's CPU
// limit), then allows it again. Outcomes, not timings: under the deny the
// sandbox is not frozen and still gets CPU time, its allocation rate is
// below a third of the allowed one (the pace is 0.02 of one CPU), after
// the allow it is above the denied one again, and the action ends as
// asked, with no OOM kill.
func TestLivePacingActuator(t *testing.T) {
	layout := cgrouptest.Live(t, "live pacing test")
	for _, tc := range []struct {
		name  string
		pacer func(t *testing.T) Pacer
	}{
		{name: "schedext", pacer: func(t *testing.T) Pacer {
			return schedexttest.Pacer(t, layout)
		}},
		{name: "cpu", pacer: func(t *testing.T) Pacer {
			p, err := NewCPUPacer(layout)
			if err != nil {
				t.Skip(err)
			}
			return p
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			be, dom := liveBackend(t, layout, tc.name)
			pacer := tc.pacer(t)
			freezer := backendActuator{b: be, staller: func() controller.SandboxStaller { return nil }}
			a := newPacingActuator(Pacing{Pacer: pacer, Rate: 0.02, Handover: -1}, be, freezer, time.Now, slog.New(slog.DiscardHandler))
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			ws := t.TempDir()
			id := "pace-" + tc.name
			if _, err := be.Create(ctx, sandbox.Spec{ID: id, Workspace: ws}); err != nil {
				t.Fatalf("creating the sandbox: %v", err)
			}
			type result struct {
				res sandbox.ExecResult
				err error
			}
			done := make(chan result, 1)
			go func() {
				r, err := be.Exec(ctx, id, sandbox.ExecRequest{Argv: []string{"/usr/local/bin/tenon"}, Env: []string{growerEnv + "=1"}, Timeout: 3 * time.Minute})
				done <- result{r, err}
			}()
			stop := func() {
				if err := os.WriteFile(filepath.Join(ws, "stop"), nil, 0o644); err != nil {
					t.Error(err)
				}
			}
			g := &sandboxGrower{t: t, be: be, id: id, counter: filepath.Join(ws, "counter")}
			if !g.waitStarted(ctx) {
				stop()
				r := <-done
				t.Fatalf("the grower never counted: %v, exit %d, stderr %q", r.err, r.res.ExitCode, r.res.Stderr)
			}
			const window = 2 * time.Second
			allowed := g.rate(ctx, window)
			if err := a.Deny(ctx, id); err != nil {
				t.Fatalf("deny: %v", err)
			}
			g.sleep(ctx, 300*time.Millisecond) // the deny reaches running tasks at their next slice or period
			cpu0 := g.cpu(ctx)
			denied := g.rate(ctx, window)
			cpu := g.cpu(ctx) - cpu0
			info, err := be.Info(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if err := a.Allow(ctx, id); err != nil {
				t.Fatalf("allow: %v", err)
			}
			g.sleep(ctx, 300*time.Millisecond)
			again := g.rate(ctx, window)
			stop()
			r := <-done
			st, _ := be.Stats(ctx, id)
			t.Logf("%s: %.1f MiB/s allowed, %.1f denied at 0.02 (%v of CPU in %v, domain %s), %.1f allowed again",
				pacer.Name(), allowed, denied, cpu.Round(time.Millisecond), window, dom, again)
			if r.err != nil || r.res.ExitCode != 0 || r.res.OOMKilled || r.res.TimedOut || st.OOMKills != 0 {
				t.Errorf("the action: err %v, exit %d, OOM killed %v (sandbox kills %d), timed out %v, stderr %q; want a clean exit",
					r.err, r.res.ExitCode, r.res.OOMKilled, st.OOMKills, r.res.TimedOut, r.res.Stderr)
			}
			if info.Paused {
				t.Error("the denied sandbox was frozen, not paced")
			}
			if cpu <= 0 {
				t.Error("the paced sandbox got no CPU time: it did not keep running")
			}
			if !(allowed > 0) || denied*3 >= allowed {
				t.Errorf("denied rate %.1f MiB/s, allowed %.1f: want below a third", denied, allowed)
			}
			if again <= denied {
				t.Errorf("rate after allow %.1f MiB/s, not above the denied %.1f", again, denied)
			}
		})
	}
}
