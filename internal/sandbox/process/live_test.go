//go:build linux

package process

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/cgroup"
	"github.com/tenon-dev/tenon/internal/disk"
	"github.com/tenon-dev/tenon/internal/memtool"
	"github.com/tenon-dev/tenon/internal/sandbox"
	"github.com/tenon-dev/tenon/internal/sandbox/sandboxtest"
)

func TestMain(m *testing.M) {
	MaybeInit()
	if arg := os.Getenv(crashChildEnv); arg != "" {
		os.Exit(crashChild(arg))
	}
	// Inside a sandbox the test binary is /usr/local/bin/tenon; serve
	// `tenon tool mem` as cmd/tenon does.
	memtool.MaybeServe()
	os.Exit(m.Run())
}

// liveLayout skips unless the test runs as root with a cgroup memory
// controller (v1, or v2 as in internal/vmtest's guest).
func liveLayout(tb testing.TB) *cgroup.Layout {
	tb.Helper()
	if os.Geteuid() != 0 {
		tb.Skip("live sandbox tests need root (namespaces, mounts, cgroups)")
	}
	l, err := cgroup.Detect("/proc")
	if err != nil {
		tb.Skipf("live sandbox tests need the cgroup memory controller: %v", err)
	}
	if _, ok := l.Controller(cgroup.Freezer); !ok {
		tb.Skip("live sandbox tests need the cgroup freezer controller")
	}
	return l
}

// liveBackend makes a workload domain with budget bytes and a backend under
// it (its Config changed by opts); both are removed when the test ends.
func liveBackend(tb testing.TB, budget int64, opts ...func(*Config)) (*Backend, *cgroup.Domain) {
	tb.Helper()
	layout := liveLayout(tb)
	log := slog.New(slog.DiscardHandler)
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	ctx := context.Background()
	name := fmt.Sprintf("tenon-test-process-%d", os.Getpid())
	dom, err := cgroup.OpenDomain(ctx, layout, name, budget, log)
	if err != nil {
		tb.Fatalf("OpenDomain: %v", err)
	}
	// Another package's live test may have zram swap on; the domain's
	// budget must end in OOM kills, not in paging (TestOOMUnderDomainBudget).
	// As in internal/app: on v2 each sandbox is kept out of swap instead,
	// since the domain's memory.swap.max 0 would forbid page-outs.
	noSwap := false
	if m, _ := layout.Controller(cgroup.Memory); m.Version == cgroup.V2 {
		noSwap = true
	} else if err := dom.DisableSwap(); err != nil {
		_ = dom.Close(ctx)
		tb.Fatalf("DisableSwap: %v", err)
	}
	cfg := Config{
		StateDir:     tb.TempDir(),
		CgroupParent: dom.Group().Path(),
		Layout:       layout,
		Logger:       log,
		NoSwap:       noSwap,
	}
	if err := disk.Check(); err != nil { // as internal/app: run without
		tb.Logf("per-sandbox disk limits off: %v", err)
		cfg.DiskMax = -1
	}
	for _, o := range opts {
		o(&cfg)
	}
	b, err := New(cfg)
	if err != nil {
		_ = dom.Close(ctx)
		tb.Fatalf("New: %v", err)
	}
	tb.Cleanup(func() {
		if err := b.Close(); err != nil {
			tb.Errorf("Close: %v", err)
		}
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := dom.Close(cctx); err != nil {
			tb.Errorf("closing domain: %v", err)
		}
	})
	return b, dom
}

func TestContract(t *testing.T) {
	sandboxtest.Run(t, func(t *testing.T) sandbox.Backend {
		b, _ := liveBackend(t, 4<<30)
		return b
	})
}
