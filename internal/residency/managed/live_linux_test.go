//go:build linux

package managed

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/cgroup"
	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/memtool"
	"github.com/tenon-dev/tenon/internal/residency"
	"github.com/tenon-dev/tenon/internal/sandbox"
	"github.com/tenon-dev/tenon/internal/sandbox/process"
	"github.com/tenon-dev/tenon/internal/trajectory/agentcgroup"
)

func TestMain(m *testing.M) {
	process.MaybeInit()
	// Inside a sandbox the test binary is /usr/local/bin/tenon; serve
	// `tenon tool mem` as cmd/tenon does.
	memtool.MaybeServe()
	if dir := os.Getenv(childEnv); dir != "" {
		os.Exit(runChild(dir))
	}
	os.Exit(m.Run())
}

// liveLayout skips unless the test runs as root with the cgroup v1 memory
// controller and a freezer.
func liveLayout(tb testing.TB) *cgroup.Layout {
	tb.Helper()
	if os.Geteuid() != 0 {
		tb.Skip("live residency tests need root (namespaces, mounts, cgroups)")
	}
	l, err := cgroup.Detect("/proc")
	if err != nil {
		tb.Skipf("live residency tests need the cgroup memory controller: %v", err)
	}
	if m, _ := l.Controller(cgroup.Memory); m.Version != cgroup.V1 {
		tb.Skip("live residency tests need the cgroup v1 memory controller (this host has v2)")
	}
	if _, ok := l.Controller(cgroup.Freezer); !ok {
		tb.Skip("live residency tests need the cgroup freezer controller")
	}
	return l
}

func testLogger() *slog.Logger {
	if testing.Verbose() && os.Getenv("TENON_TEST_DEBUG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

// liveEnv is a workload domain, a root directory (one file system for the
// backend's and residency's state) and the backends opened on it.
type liveEnv struct {
	tb     testing.TB
	layout *cgroup.Layout
	dom    *cgroup.Domain
	root   string
	log    *slog.Logger

	mu       sync.Mutex
	backends []*process.Backend
}

var domainSeq atomic.Int64

func newLiveEnv(tb testing.TB) *liveEnv {
	tb.Helper()
	layout := liveLayout(tb)
	e := &liveEnv{tb: tb, layout: layout, root: tb.TempDir(), log: testLogger()}
	name := fmt.Sprintf("tenon-test-residency-%d-%d", os.Getpid(), domainSeq.Add(1))
	dom, err := cgroup.OpenDomain(context.Background(), layout, name, 4<<30, e.log)
	if err != nil {
		tb.Fatalf("OpenDomain: %v", err)
	}
	e.dom = dom
	tb.Cleanup(func() {
		e.mu.Lock()
		bs := e.backends
		e.mu.Unlock()
		// Newest first: an older backend's sandboxes were reaped by a newer one.
		for i := len(bs) - 1; i >= 0; i-- {
			err := bs[i].Close()
			if i == len(bs)-1 && err != nil {
				tb.Errorf("closing backend: %v", err)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := dom.Close(ctx); err != nil {
			tb.Errorf("closing domain: %v", err)
		}
	})
	return e
}

func (e *liveEnv) resDir() string { return filepath.Join(e.root, "residency") }

// backend opens a process backend on the shared state dir; it salvages
// the layers of sandboxes an earlier backend left.
func (e *liveEnv) backend() *process.Backend {
	e.tb.Helper()
	b, err := openBackend(e.root, e.dom.Group().Path(), e.layout, e.log)
	if err != nil {
		e.tb.Fatalf("process.New: %v", err)
	}
	e.mu.Lock()
	e.backends = append(e.backends, b)
	e.mu.Unlock()
	return b
}

func openBackend(root, parent string, layout *cgroup.Layout, log *slog.Logger) (*process.Backend, error) {
	return process.New(process.Config{
		StateDir:     filepath.Join(root, "backend"),
		CgroupParent: parent,
		Layout:       layout,
		Logger:       log,
		SalvageDir:   SalvageDir(filepath.Join(root, "residency")),
	})
}

func newManager(tb testing.TB, e *liveEnv, h controller.SandboxHost, p *pressureVar) *Manager {
	tb.Helper()
	return newManagerAt(tb, e, h, p, 0.001)
}

// newManagerAt is newManager with the workflows' model waits at time
// scale scale (residency's predicted waits).
func newManagerAt(tb testing.TB, e *liveEnv, h controller.SandboxHost, p *pressureVar, scale float64, opts ...func(*Config)) *Manager {
	tb.Helper()
	cfg := Config{StateDir: e.resDir(), TimeScale: scale, NoPageOut: true, Residency: residency.Config{RematBackoff: 10 * time.Millisecond}}
	for _, o := range opts {
		o(&cfg)
	}
	m, err := NewManager(cfg, h, p.get, e.log)
	if err != nil {
		tb.Fatalf("NewManager: %v", err)
	}
	return m
}

// act runs one action of a through m (Ensure, exec, Boundary) and returns
// its stdout.
func act(tb testing.TB, m *Manager, b sandbox.Backend, a *controller.Agent, i int, shell string) (string, string) {
	tb.Helper()
	ctx := lctx(tb)
	a.Next = i
	id, err := m.Ensure(ctx, a)
	if err != nil {
		tb.Fatalf("Ensure(%s, action %d): %v", a.ID, i, err)
	}
	r, err := b.Exec(ctx, id, sandbox.ExecRequest{Shell: shell, Timeout: 20 * time.Second, Background: agentcgroup.StartsBackground(shell)})
	if err != nil {
		tb.Fatalf("Exec(%s in %s): %v", shell, id, err)
	}
	if r.ExitCode != 0 {
		tb.Fatalf("%s in %s exited %d: %s", shell, id, r.ExitCode, r.Stderr)
	}
	o := controller.Outcome{Index: i, Sandbox: id, Exit: r.ExitCode, Duration: r.Duration}
	if err := m.Boundary(ctx, a, o); err != nil {
		tb.Fatalf("Boundary(%s, %d): %v", a.ID, i, err)
	}
	return string(r.Stdout), id
}

// writeFiles writes random files outside and inside the workspace and
// prints their sha256 sums.
const writeFiles = `set -e
mkdir -p /opt/tool /var/lib/pkg /root/.cache
head -c 3000000 /dev/urandom > /opt/tool/x
head -c 100000 /dev/urandom > /var/lib/pkg/y
ln -s /opt/tool/x /var/lib/pkg/link
head -c 50000 /dev/urandom > /root/.cache/z
mkdir -p /workspace/src && head -c 200000 /dev/urandom > /workspace/src/w
chmod 0750 /opt/tool/x
`

const sumFiles = `cd / && sha256sum opt/tool/x var/lib/pkg/y var/lib/pkg/link root/.cache/z workspace/src/w && stat -c '%a %N' opt/tool/x var/lib/pkg/link`

// assertClean checks that no sandbox, cgroup or process of the domain is left.
func assertClean(tb testing.TB, e *liveEnv) {
	tb.Helper()
	pids, err := e.dom.Group().Pids()
	if err != nil {
		tb.Errorf("domain pids: %v", err)
	}
	if len(pids) != 0 {
		tb.Errorf("%d processes left in the domain: %v", len(pids), pids)
	}
	for _, c := range []string{cgroup.Memory, cgroup.Freezer} {
		ctl, ok := e.layout.Controller(c)
		if !ok {
			continue
		}
		dir := filepath.Join(ctl.Root, e.dom.Group().Path())
		ents, _ := os.ReadDir(dir)
		for _, en := range ents {
			if en.IsDir() {
				tb.Errorf("cgroup %s/%s left", dir, en.Name())
			}
		}
	}
	mi, _ := os.ReadFile("/proc/self/mountinfo")
	if strings.Contains(string(mi), e.root) {
		tb.Errorf("mounts under %s left", e.root)
	}
}
