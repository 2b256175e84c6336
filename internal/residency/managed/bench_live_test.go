//go:build linux

package managed

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/sandbox"
)

// BenchmarkLiveLayer200MB measures teardown (validate, capture, commit,
// destroy) and rematerialization (extract, create with the layer renamed
// into place, readiness probe) of a sandbox whose writable layer holds
// about 200 MiB outside the workspace plus 8 MiB in it: "random" is
// incompressible, "base64" is random text (compresses about 4:3, the
// slowest case for flate), "pylib" is four copies of the host's Python
// library (many small source and bytecode files, like a pip install).
//
// The first teardown stores every file (teardown-first-ms,
// written-first-MiB); later ones reuse the blobs of files unchanged since
// the rematerialization (written-MiB is the mean per teardown).
//
//	go test ./internal/residency/managed -run '^$' -bench LiveLayer200MB -benchtime 3x
func BenchmarkLiveLayer200MB(b *testing.B) {
	const ws = "mkdir -p /workspace/w && for i in $(seq 8); do head -c 1048576 /dev/urandom > /workspace/w/f$i; done"
	for _, kind := range []struct{ name, fill string }{
		{"random", "mkdir -p /opt/big && for i in $(seq 200); do head -c 1048576 /dev/urandom > /opt/big/f$i; done"},
		{"base64", "mkdir -p /opt/big && for i in $(seq 200); do head -c 786432 /dev/urandom | base64 -w 100 > /opt/big/f$i; done"},
		{"pylib", "mkdir -p /opt/big && for i in $(seq 4); do cp -a $(ls -d /usr/lib/python3.* | head -1) /opt/big/p$i; done"},
	} {
		b.Run(kind.name, func(b *testing.B) {
			e := newLiveEnv(b)
			be := e.backend()
			var p pressureVar
			m := newManager(b, e, newNotes().host(be, "bn"), &p)
			b.Cleanup(func() { m.Close() })
			ctx := context.Background()
			a := agent("big", 2)
			fill := "set -e; " + kind.fill + "; " + ws + "; du -sm /opt/big | cut -f1"
			step := boundaryStep(b, m, be, a)
			b.Logf("layer: %s MiB", step(fill))
			var td, rm, tdCPU, rmCPU, tdCold time.Duration
			var writtenCold int64
			b.ResetTimer()
			for i := range b.N {
				t0, c0 := time.Now(), cpuTime()
				if err := m.Residency().Teardown(ctx, a.ID); err != nil {
					b.Fatal(err)
				}
				t1, c1 := time.Now(), cpuTime()
				if i == 0 {
					tdCold, writtenCold = t1.Sub(t0), m.Metrics().BytesCaptured
				}
				if _, err := m.Ensure(ctx, a); err != nil {
					b.Fatal(err)
				}
				t2, c2 := time.Now(), cpuTime()
				td += t1.Sub(t0)
				rm += t2.Sub(t1)
				tdCPU += c1 - c0
				rmCPU += c2 - c1
				b.StopTimer()
				if err := m.Boundary(ctx, a, controller.Outcome{Sandbox: a.SandboxID}); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			b.StopTimer()
			if out := step("du -sm /opt/big | cut -f1"); out == "" {
				b.Fatal("layer lost")
			}
			b.ReportMetric(float64(td.Milliseconds())/float64(b.N), "teardown-ms")
			b.ReportMetric(float64(rm.Milliseconds())/float64(b.N), "remat-ms")
			b.ReportMetric(float64(tdCPU.Milliseconds())/float64(b.N), "teardown-cpu-ms")
			b.ReportMetric(float64(rmCPU.Milliseconds())/float64(b.N), "remat-cpu-ms")
			mt := m.Residency().Metrics()
			b.ReportMetric(float64(tdCold.Milliseconds()), "teardown-first-ms")
			b.ReportMetric(float64(writtenCold)/(1<<20), "written-first-MiB")
			b.ReportMetric(float64(mt.BytesCaptured)/float64(mt.Teardowns)/(1<<20), "written-MiB")
			if err := m.Release(ctx, a); err != nil {
				b.Error(err)
			}
		})
	}
}

// cpuTime is the CPU time (user + system) of this process so far: capture
// and extraction run in it, so a delta measures their work independently
// of how busy the host is.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// boundaryStep returns a function that runs a shell command in a's sandbox
// (made or rematerialized by m), records the action boundary after it and
// returns its stdout; any failure fails b.
func boundaryStep(b *testing.B, m *Manager, be sandbox.Backend, a *controller.Agent) func(cmd string) string {
	ctx := context.Background()
	return func(cmd string) string {
		id, err := m.Ensure(ctx, a)
		if err != nil {
			b.Fatal(err)
		}
		r, err := be.Exec(ctx, id, sandbox.ExecRequest{Shell: cmd, Timeout: time.Minute})
		if err != nil || r.ExitCode != 0 {
			b.Fatalf("%s: %v %s", cmd, err, r.Stderr)
		}
		if err := m.Boundary(ctx, a, controller.Outcome{Sandbox: id}); err != nil {
			b.Fatal(err)
		}
		return string(r.Stdout)
	}
}
