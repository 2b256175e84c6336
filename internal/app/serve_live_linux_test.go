package app

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/api"
	"github.com/tenon-dev/tenon/internal/api/client"
	"github.com/tenon-dev/tenon/internal/cgroup"
	"github.com/tenon-dev/tenon/internal/units"
)

// TestLiveServeOversubscribed runs the daemon as a user does (Serve with
// the process backend and a workload domain of its own) behind four
// harness loops whose actions together need more memory than the budget:
// each agent waits for its model (the wait intents), then runs a memory
// tool that ramps to 96 MiB and holds it, three times, in a 256 MiB
// domain, with no memory hint, so the daemon starts from its class priors.
// Under the default policy every action must finish with exit 0 and no OOM
// kill, and the daemon's counters must show none; under eager, the
// control, the same load must be OOM-killed (so the load does oversubscribe
// the budget). Shutting the daemon down must remove its domain. It runs on
// the host's cgroups and, in the VM suite, under pure cgroup v2
// (internal/vmtest).
func TestLiveServeOversubscribed(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("live sandboxes need root (cgroups, namespaces, mounts)")
	}
	layout, err := cgroup.Detect("/proc")
	if err != nil {
		t.Skipf("no usable cgroup hierarchy with a memory controller: %v", err)
	}
	t.Run("default policy: no OOM kill", func(t *testing.T) {
		ok, ooms := serveOversubscribed(t, layout, DefaultPolicy(), true)
		if ok != serveAgents*serveActions || ooms != 0 {
			t.Errorf("%d of %d actions ran to completion, %v OOM kills; want all, none", ok, serveAgents*serveActions, ooms)
		}
	})
	t.Run("eager: OOM-killed", func(t *testing.T) {
		if _, ooms := serveOversubscribed(t, layout, "eager", false); ooms == 0 {
			t.Errorf("eager had no OOM kill: the load does not oversubscribe the budget")
		}
	})
}

const (
	serveAgents  = 4
	serveActions = 3
)

// serveOversubscribed runs TestLiveServeOversubscribed's load on a daemon
// with policy and returns how many actions ran to completion and the
// daemon's OOM counter. strict reports every action that did not complete
// as an error.
func serveOversubscribed(t *testing.T, layout *cgroup.Layout, policy string, strict bool) (ok int, ooms float64) {
	const budget = 256 * units.MiB
	domain := fmt.Sprintf("tenon-test-serve-%d", os.Getpid())
	d := startServe(t, ServeConfig{StateDir: t.TempDir(), Budget: budget, Domain: domain, Policy: policy, Backend: "process"})
	defer func() {
		if t.Failed() {
			_ = d.stop(t) // the log is read once Serve returned
			t.Logf("daemon log:\n%s", d.logs.String())
		}
	}()
	c := client.NewUnix(d.sock)
	defer c.Close()

	rctx, rcancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer rcancel()
	type outcome struct {
		agent, action int
		resp          api.ExecResponse
		err           error
	}
	var (
		mu  sync.Mutex
		out []outcome
		wg  sync.WaitGroup
	)
	for a := range serveAgents {
		wg.Go(func() {
			id, err := c.CreateAgent(rctx, api.CreateAgentRequest{})
			if err != nil {
				mu.Lock()
				out = append(out, outcome{agent: a, action: -1, err: err})
				mu.Unlock()
				return
			}
			for k := range serveActions {
				// The model wait: the daemon may page the idle sandbox out.
				err := c.Wait(rctx, id, true)
				if err == nil {
					time.Sleep(300 * time.Millisecond)
					err = c.Wait(rctx, id, false)
				}
				var r api.ExecResponse
				if err == nil {
					r, err = c.Exec(rctx, id, api.ExecRequest{Command: "tenon", Class: "test", TimeoutS: 120,
						Env: []string{memToolEnv + "=--peak 96MiB --ramp 200ms --hold 800ms"}})
				}
				mu.Lock()
				out = append(out, outcome{agent: a, action: k, resp: r, err: err})
				mu.Unlock()
				if err != nil {
					return
				}
			}
			if err := c.DeleteAgent(rctx, id); err != nil {
				t.Errorf("agent %d: delete: %v", a, err)
			}
		})
	}
	wg.Wait()
	for _, o := range out {
		switch {
		case o.err != nil:
			t.Errorf("agent %d action %d: %v", o.agent, o.action, o.err)
		case o.resp.ExitCode != 0 || o.resp.OOM || o.resp.Failure != "":
			if strict {
				t.Errorf("agent %d action %d: exit %d, oom %v, failure %q: %s %s", o.agent, o.action,
					o.resp.ExitCode, o.resp.OOM, o.resp.Failure, o.resp.Stderr, o.resp.Message)
			}
		case o.resp.PeakBytes < 64*units.MiB:
			t.Errorf("agent %d action %d: peak %s, want the tool's 96 MiB (did it run?)", o.agent, o.action, units.FormatSize(o.resp.PeakBytes))
		default:
			ok++
		}
	}
	m, err := c.Metrics(rctx)
	if err != nil {
		t.Fatal(err)
	}
	ooms, found := metricValue(m, "tenon_oom_events_total")
	if !found {
		t.Errorf("no tenon_oom_events_total in the daemon's metrics")
	}
	if err := d.stop(t); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	dirs, err := layout.Dirs(domain)
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range dirs {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("the daemon left its domain behind: %s (%v)", dir, err)
		}
	}
	return ok, ooms
}

// metricValue is the value of the first sample of metric name in a
// Prometheus text exposition.
func metricValue(text, name string) (float64, bool) {
	for line := range strings.Lines(text) {
		f := strings.Fields(line)
		if len(f) == 2 && (f[0] == name || strings.HasPrefix(f[0], name+"{")) {
			var v float64
			if _, err := fmt.Sscan(f[1], &v); err == nil {
				return v, true
			}
		}
	}
	return 0, false
}
