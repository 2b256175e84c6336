package live

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"github.com/tenon-dev/tenon/internal/clock"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tenon-dev/tenon/internal/cgroup"
	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/policy"
	"github.com/tenon-dev/tenon/internal/sandbox"
	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/units"
)

// peakWorkflows spreads actions with the given peaks over workflows of
// three actions; odd-indexed actions carry the peak as a recorded
// measurement of a Run action, the others as a Mem profile.
func peakWorkflows(peaks []float64) []trajectory.Workflow {
	var wfs []trajectory.Workflow
	for i, p := range peaks {
		if i%3 == 0 {
			wfs = append(wfs, trajectory.Workflow{ID: "wf"})
		}
		a := trajectory.Action{Class: "bash", Command: "c"}
		if i%2 == 1 {
			a.Run = "true"
			a.Recorded = &trajectory.Recorded{DurationS: 1, PeakMiB: p}
		} else {
			a.Mem = &trajectory.MemProfile{PeakMiB: p}
		}
		w := &wfs[len(wfs)-1]
		w.Actions = append(w.Actions, a)
	}
	return wfs
}

// v2Tree builds a fake cgroup2 tree holding group tenon/sb-1 with a
// memory.high file and returns the layout and that file.
func v2Tree(t *testing.T) (*cgroup.Layout, string) {
	t.Helper()
	prefix := t.TempDir()
	root := filepath.Join(prefix, "sys/fs/cgroup")
	dir := filepath.Join(root, "tenon", "sb-1")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "cgroup.controllers"), []byte("cpu memory pids\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	high := filepath.Join(dir, "memory.high")
	if err := os.WriteFile(high, []byte("max"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := cgroup.LayoutFromMounts([]cgroup.MountInfo{{Root: "/", MountPoint: "/sys/fs/cgroup", FSType: "cgroup2"}}, prefix)
	if err != nil {
		t.Fatal(err)
	}
	return l, high
}

// lowHigh is a profile with one small and one large action; at high=0.5
// the first is Low and the second High.
func lowHigh() []trajectory.Workflow { return peakWorkflows([]float64{50, 900}) }

// startAgentCgroup starts agentcgroup (high=0.5, low=300MiB over lowHigh:
// action 0 is Low, action 1 High) on the live adapter with limits through
// layout (nil: none detected); open, when set, replaces cgroup.Open.
func startAgentCgroup(t *testing.T, layout *cgroup.Layout, logger *slog.Logger, open func(*cgroup.Layout, string) (cgroup.Group, error)) (*Policy, *controller.Agent) {
	t.Helper()
	wfs := lowHigh()
	m, err := policy.Build("agentcgroup", policy.Options{Budget: units.GiB, Workflows: wfs,
		Params: map[string]string{"high": "0.5", "low": "300MiB"}})
	if err != nil {
		t.Fatal(err)
	}
	lim := &CgroupLimiter{Layout: layout, Clock: clock.Real{}, Logger: logger, Open: open}
	if layout == nil {
		lim.degrade("no cgroup layout", cgroup.ErrNoMemoryController)
	}
	p := New(m, Options{Logger: logger, Limits: lim})
	if err := p.Start(t.Context(), controller.Env{Budget: units.GiB, Clock: clock.Real{}}); err != nil {
		t.Fatal(err)
	}
	a := &controller.Agent{ID: "wf", Attempt: 1, Workflow: &wfs[0], SandboxID: "sb-1"}
	if err := p.AgentReady(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	return p, a
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestAgentCgroupV2MemoryHigh(t *testing.T) {
	layout, high := v2Tree(t)
	p, a := startAgentCgroup(t, layout, nil, nil)
	p.SandboxUp(a, sandbox.Info{ID: "sb-1", CgroupPath: "tenon/sb-1"})
	steps := []struct {
		name      string
		action    int
		wantHeavy bool
		want      string // memory.high while the action runs
	}{
		{name: "low is limited", action: 0, want: "314572800"},
		{name: "high is unbounded", action: 1, wantHeavy: true, want: "max"},
		{name: "low again", action: 0, want: "314572800"},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			a.Next = s.action
			g, err := p.ActionReady(t.Context(), a, a.Action())
			if err != nil {
				t.Fatal(err)
			}
			if g.Heavy != s.wantHeavy {
				t.Errorf("Heavy = %v, want %v", g.Heavy, s.wantHeavy)
			}
			if got := readFile(t, high); got != s.want {
				t.Errorf("memory.high during the action = %q, want %q", got, s.want)
			}
			p.ActionDone(a, g, controller.Outcome{})
			if got := readFile(t, high); got != "max" {
				t.Errorf("memory.high after the action = %q, want max", got)
			}
		})
	}
	if got := p.Stats(); got.High != 1 || got.Low != 2 || got.Limited != 2 {
		t.Errorf("Stats = %+v, want High 1, Low 2, Limited 2", got)
	}
	// Stop lifts a threshold left applied.
	a.Next = 0
	if _, err := p.ActionReady(t.Context(), a, a.Action()); err != nil {
		t.Fatal(err)
	}
	if err := p.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, high); got != "max" {
		t.Errorf("memory.high after Stop = %q, want max", got)
	}
}

// quotaCall is one SetCPUQuota call.
type quotaCall struct{ quota, period time.Duration }

// fakeGroup is a cgroup.Group whose working set the test sets and whose
// CPU quota calls it records; the other methods are not used.
type fakeGroup struct {
	cgroup.Group
	mu      sync.Mutex
	ws      int64
	calls   []quotaCall
	readErr error
}

func (g *fakeGroup) Path() string { return "tenon/sb-1" }

func (g *fakeGroup) Charged() (int64, error) {
	m, err := g.Memory()
	return m.Usage, err
}

func (g *fakeGroup) MemoryPids() ([]int, error) { return g.Pids() }

func (g *fakeGroup) WorkingSet() (int64, error) {
	m, err := g.Memory()
	return m.WorkingSet, err
}

func (g *fakeGroup) Memory() (cgroup.MemoryStats, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return cgroup.MemoryStats{Usage: g.ws + 10*units.MiB, WorkingSet: g.ws}, g.readErr
}

func (g *fakeGroup) SetCPUQuota(q, p time.Duration) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.calls = append(g.calls, quotaCall{q, p})
	return nil
}

func (g *fakeGroup) set(ws int64) { g.mu.Lock(); g.ws = ws; g.mu.Unlock() }

func (g *fakeGroup) quotaCalls() []quotaCall {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]quotaCall(nil), g.calls...)
}

func TestAgentCgroupV1Emulation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		layout := &cgroup.Layout{Controllers: map[string]cgroup.Mount{cgroup.Memory: {Version: cgroup.V1, Root: "/nonexistent/memory"}}}
		fg := &fakeGroup{ws: 100 * units.MiB}
		p, a := startAgentCgroup(t, layout, nil, func(_ *cgroup.Layout, path string) (cgroup.Group, error) {
			if path != "tenon/sb-1" {
				t.Errorf("opened %q, want tenon/sb-1", path)
			}
			return fg, nil
		})
		p.SandboxUp(a, sandbox.Info{ID: "sb-1", CgroupPath: "tenon/sb-1"})
		throttle := quotaCall{DefaultThrottleQuota, DefaultThrottlePeriod}
		lift := quotaCall{0, 0}
		poll := DefaultThrottlePoll

		a.Next = 0 // Low
		g, err := p.ActionReady(t.Context(), a, a.Action())
		if err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if got := fg.quotaCalls(); len(got) != 0 {
			t.Fatalf("under the threshold: quota calls %v, want none", got)
		}
		steps := []struct {
			name string
			ws   int64
			want []quotaCall
		}{
			{name: "over throttles", ws: 301 * units.MiB, want: []quotaCall{throttle}},
			{name: "still over stays throttled", ws: 500 * units.MiB, want: []quotaCall{throttle}},
			{name: "under releases", ws: 300 * units.MiB, want: []quotaCall{throttle, lift}},
			{name: "over again", ws: 400 * units.MiB, want: []quotaCall{throttle, lift, throttle}},
		}
		for _, s := range steps {
			fg.set(s.ws)
			time.Sleep(poll)
			synctest.Wait()
			if got := fg.quotaCalls(); !equalCalls(got, s.want) {
				t.Fatalf("%s: quota calls %v, want %v", s.name, got, s.want)
			}
		}
		p.ActionDone(a, g, controller.Outcome{})
		want := []quotaCall{throttle, lift, throttle, lift}
		if got := fg.quotaCalls(); !equalCalls(got, want) {
			t.Fatalf("after ActionDone: quota calls %v, want %v", got, want)
		}
		// The loop has stopped: nothing changes any more, and a High action
		// is never watched.
		a.Next = 1
		g, err = p.ActionReady(t.Context(), a, a.Action())
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * poll)
		synctest.Wait()
		p.ActionDone(a, g, controller.Outcome{})
		if got := fg.quotaCalls(); !equalCalls(got, want) {
			t.Fatalf("after a High action: quota calls %v, want %v", got, want)
		}
		// SandboxDown stops a running loop.
		a.Next = 0
		if _, err := p.ActionReady(t.Context(), a, a.Action()); err != nil {
			t.Fatal(err)
		}
		p.SandboxDown(a, "sb-1")
		if err := p.Stop(t.Context()); err != nil {
			t.Fatal(err)
		}
	})
}

func equalCalls(a, b []quotaCall) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestAgentCgroupDegradesWithoutCgroup(t *testing.T) {
	tests := []struct {
		name   string
		layout bool // a layout is detected
		path   string
	}{
		{name: "no layout", path: "tenon/sb-1"},
		{name: "empty cgroup path", layout: true},
		{name: "group missing", layout: true, path: "fake/sb-1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			logger := slog.New(slog.NewTextHandler(&buf, nil))
			var layout *cgroup.Layout
			if tt.layout {
				layout, _ = v2Tree(t)
			}
			p, a := startAgentCgroup(t, layout, logger, nil)
			for range 2 {
				p.SandboxUp(a, sandbox.Info{ID: "sb-1", CgroupPath: tt.path})
			}
			a.Next = 0
			g, err := p.ActionReady(context.Background(), a, a.Action())
			if err != nil {
				t.Fatal(err)
			}
			if g.Token != nil || g.Heavy {
				t.Errorf("grant %+v, want an empty Low grant", g)
			}
			p.ActionDone(a, g, controller.Outcome{})
			if n := strings.Count(buf.String(), "not enforcing"); n != 1 {
				t.Errorf("logged %d degradation warnings, want 1:\n%s", n, buf.String())
			}
			if got := p.Stats(); got.Low != 1 || got.Limited != 0 {
				t.Errorf("Stats = %+v, want one unlimited Low action", got)
			}
		})
	}
}

// TestAgentCgroupV1EmulationLive throttles a real v1 group holding a shell
// that keeps 32 MiB, under an 8 MiB Low threshold.
func TestAgentCgroupV1EmulationLive(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("live agentcgroup test needs root")
	}
	layout, err := cgroup.Detect("/proc")
	if err != nil {
		t.Skipf("live agentcgroup test needs a memory controller: %v", err)
	}
	for _, c := range []string{cgroup.Memory, cgroup.CPU} {
		if m, ok := layout.Controller(c); !ok || m.Version != cgroup.V1 {
			t.Skipf("live agentcgroup test needs the cgroup v1 %s controller", c)
		}
	}
	name := fmt.Sprintf("tenon-test-live-%d", os.Getpid())
	g, err := cgroup.Create(layout, name)
	if err != nil {
		t.Fatalf("creating %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := g.KillAll(ctx); err != nil {
			t.Errorf("emptying %s: %v", name, err)
		}
		if err := g.Delete(); err != nil {
			t.Errorf("deleting %s: %v", name, err)
		}
	})
	cmd := exec.Command("/bin/sh", "-c", `read l; x=$(head -c 33554432 /dev/zero | tr '\000' a); echo ready; read l`)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); _ = cmd.Process.Kill(); _ = cmd.Wait() })
	if err := g.AddProc(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(stdin, "\n"); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("helper said %q, %v", line, err)
	}

	wfs := lowHigh()
	m, err := policy.Build("agentcgroup", policy.Options{Budget: units.GiB, Workflows: wfs,
		Params: map[string]string{"high": "0.5", "low": "8MiB"}})
	if err != nil {
		t.Fatal(err)
	}
	p := New(m, Options{})
	if err := p.Start(t.Context(), controller.Env{Budget: units.GiB, Clock: clock.Real{}}); err != nil {
		t.Fatal(err)
	}
	a := &controller.Agent{ID: "wf", Attempt: 1, Workflow: &wfs[0], SandboxID: "sb-live"}
	if err := p.AgentReady(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	p.SandboxUp(a, sandbox.Info{ID: "sb-live", CgroupPath: name})
	dirs, err := layout.Dirs(name)
	if err != nil {
		t.Fatal(err)
	}
	quotaFile := filepath.Join(dirs[cgroup.CPU], "cpu.cfs_quota_us")
	quota := func() string { return strings.TrimSpace(readFile(t, quotaFile)) }

	gr, err := p.ActionReady(t.Context(), a, a.Action())
	if err != nil {
		t.Fatal(err)
	}
	want := strconv.FormatInt(DefaultThrottleQuota.Microseconds(), 10)
	deadline := time.Now().Add(2 * time.Second)
	for quota() != want && time.Now().Before(deadline) {
		time.Sleep(DefaultThrottlePoll)
	}
	if got := quota(); got != want {
		t.Fatalf("cpu.cfs_quota_us of a group over the Low threshold = %s, want %s", got, want)
	}
	p.ActionDone(a, gr, controller.Outcome{})
	if got := quota(); got != "-1" {
		t.Errorf("cpu.cfs_quota_us after the action = %s, want -1", got)
	}
	if err := p.Stop(t.Context()); err != nil {
		t.Error(err)
	}
}
