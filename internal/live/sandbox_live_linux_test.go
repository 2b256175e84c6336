//go:build linux

package live

import (
	"context"
	"encoding/binary"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/cgroup"
	"github.com/tenon-dev/tenon/internal/cgroup/cgrouptest"
	"github.com/tenon-dev/tenon/internal/sandbox"
	"github.com/tenon-dev/tenon/internal/sandbox/process"
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
		growerFailed(2, err)
	}
	var held [][]byte
	var buf [8]byte
	for n := uint64(1); ; n++ {
		b, err := unix.Mmap(-1, 0, chunk, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
		if err != nil {
			growerFailed(3, err)
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
			growerFailed(4, err)
		}
		if _, err := os.Stat(filepath.Join(sandbox.WorkspaceMount, "stop")); err == nil {
			os.Exit(0)
		}
	}
}

// growerFailed ends the grower with code, err on its stderr (the
// action's, which the test prints).
func growerFailed(code int, err error) {
	os.Stderr.WriteString("grower: " + err.Error() + "\n")
	os.Exit(code)
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

// liveBackend is the process backend in a workload domain of its own
// (named after the test and this process), both removed at cleanup.
func liveBackend(t *testing.T, layout *cgroup.Layout, name string) (sandbox.Backend, string) {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	domain := "tenon-test-pacing-" + name + "-" + strconv.Itoa(os.Getpid())
	const budget = 1 * units.GiB
	dom := cgrouptest.Domain(t, layout, domain, budget)
	be, err := process.New(process.Config{StateDir: t.TempDir(), CgroupParent: dom.Group().Path(), Layout: layout, Logger: log, DiskMax: -1})
	if err != nil {
		t.Skipf("process backend not available: %v", err)
	}
	t.Cleanup(func() {
		if err := be.Close(); err != nil {
			t.Errorf("closing backend: %v", err)
		}
	})
	return be, domain + ", " + units.FormatSize(budget)
}
