//go:build linux

package live

import (
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/cgroup"
	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/sandbox"
	"github.com/tenon-dev/tenon/internal/sandbox/process"
	"github.com/tenon-dev/tenon/internal/schedext"
	"github.com/tenon-dev/tenon/internal/units"
	"golang.org/x/sys/unix"
)

// growerEnv makes the test binary, run as an action in a sandbox (it is
// the sandbox's /usr/local/bin/tenon), the grower of TestLivePacingActuator.
const growerEnv = "TENON_LIVE_GROWER"

func TestMain(m *testing.M) {
	process.MaybeInit()
	if os.Getenv(growerEnv) != "" {
		grow()
		return
	}
	os.Exit(m.Run())
}

// grow allocates memory as fast as it can, 1 MiB at a time (mapped, every
// page touched), keeping up to 64 MiB and then unmapping it all and
// starting over, and counts the MiB in /workspace/counter (8 bytes, little
// endian, the host reads it) until /workspace/stop exists.
func grow() {
	const chunk, keep = 1 << 20, 64
	f, err := os.OpenFile(filepath.Join(sandbox.WorkspaceMount, "counter"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var held [][]byte
	var buf [8]byte
	for n := uint64(1); ; n++ {
		b, err := unix.Mmap(-1, 0, chunk, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		for i := 0; i < chunk; i += 4096 {
			b[i] = 1
		}
		if held = append(held, b); len(held) == keep {
			for _, h := range held {
				_ = unix.Munmap(h)
			}
			held = held[:0]
		}
		binary.LittleEndian.PutUint64(buf[:], n)
		if _, err := f.WriteAt(buf[:], 0); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(4)
		}
		if _, err := os.Stat(filepath.Join(sandbox.WorkspaceMount, "stop")); err == nil {
			os.Exit(0)
		}
	}
}

// TestLivePacingActuator is the gate's pacing actuator end to end on the
// process backend: a sandbox runs an action that grows as fast as it can;
// the actuator denies it (paces it, through sched_ext or the cgroup's CPU
// limit), then allows it again. Outcomes, not timings: under the deny the
// sandbox is not frozen and still gets CPU time, its allocation rate is
// below a third of the allowed one (the pace is 0.02 of one CPU), after
// the allow it is above the denied one again, and the action ends as
// asked, with no OOM kill.
func TestLivePacingActuator(t *testing.T) {
	layout := liveCgroups(t)
	for _, tc := range []struct {
		name  string
		pacer func(t *testing.T) Pacer
	}{
		{name: "schedext", pacer: func(t *testing.T) Pacer {
			if err := schedext.Supported(); err != nil {
				t.Skip(err)
			}
			if m, _ := layout.Controller(cgroup.Memory); m.Version != cgroup.V2 || layout.Unified == "" {
				t.Skip("pacing in sched_ext needs the sandboxes on cgroup v2")
			}
			s, err := schedext.Load(schedext.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if !s.Enabled() {
					t.Errorf("the kernel unloaded the scheduler during the test: %v", s.Exit())
				}
				if err := s.Close(); err != nil {
					t.Errorf("unloading the scheduler: %v", err)
				}
			})
			return schedext.NewCgroupPacer(s, layout.Unified)
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

// sandboxGrower reads the grower's counter and its sandbox's CPU time.
type sandboxGrower struct {
	t       *testing.T
	be      sandbox.Backend
	id      string
	counter string
}

func (g *sandboxGrower) mib() uint64 {
	b, err := os.ReadFile(g.counter)
	if err != nil || len(b) < 8 {
		return 0
	}
	return binary.LittleEndian.Uint64(b)
}

func (g *sandboxGrower) waitStarted(ctx context.Context) bool {
	for ctx.Err() == nil {
		if g.mib() > 0 {
			return true
		}
		g.sleep(ctx, 50*time.Millisecond)
	}
	return false
}

// rate is the grower's MiB/s over d.
func (g *sandboxGrower) rate(ctx context.Context, d time.Duration) float64 {
	n0, t0 := g.mib(), time.Now()
	g.sleep(ctx, d)
	return float64(g.mib()-n0) / time.Since(t0).Seconds()
}

func (g *sandboxGrower) cpu(ctx context.Context) time.Duration {
	st, err := g.be.Stats(ctx, g.id)
	if err != nil {
		g.t.Fatalf("sandbox stats: %v", err)
	}
	return st.CPU
}

func (g *sandboxGrower) sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// liveCgroups skips unless the test runs as root with a cgroup memory
// controller.
func liveCgroups(t *testing.T) *cgroup.Layout {
	t.Helper()
	if testing.Short() {
		t.Skip("live test skipped in -short mode")
	}
	if os.Geteuid() != 0 {
		t.Skip("live test needs root (namespaces, mounts, cgroups)")
	}
	l, err := cgroup.Detect("/proc")
	if err != nil {
		t.Skipf("live test needs the cgroup memory controller: %v", err)
	}
	return l
}

// liveBackend is the process backend in a workload domain of its own
// (named after the test and this process), both removed at cleanup.
func liveBackend(t *testing.T, layout *cgroup.Layout, name string) (sandbox.Backend, string) {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	domain := fmt.Sprintf("tenon-test-pacing-%s-%d", name, os.Getpid())
	const budget = 1 * units.GiB
	dom, err := cgroup.OpenDomain(context.Background(), layout, domain, budget, log)
	if err != nil {
		t.Fatalf("OpenDomain: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := dom.Close(ctx); err != nil {
			t.Errorf("closing domain: %v", err)
		}
	})
	be, err := process.New(process.Config{StateDir: t.TempDir(), CgroupParent: dom.Group().Path(), Layout: layout, Logger: log, DiskMax: -1})
	if err != nil {
		t.Skipf("process backend not available: %v", err)
	}
	t.Cleanup(func() {
		if err := be.Close(); err != nil {
			t.Errorf("closing backend: %v", err)
		}
	})
	return be, fmt.Sprintf("%s, %s", domain, units.FormatSize(budget))
}
