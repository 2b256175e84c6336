//go:build linux

package managed

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/cgroup"
	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/crashtest"
	"github.com/tenon-dev/tenon/internal/sandbox"
	"github.com/tenon-dev/tenon/internal/trajectory/agentcgroup"
)

// childEnv names the state root of the crash child (see runChild);
// childCgroupEnv its cgroup parent.
const (
	childEnv       = "TENON_RESIDENCY_CRASH_CHILD"
	childCgroupEnv = "TENON_RESIDENCY_CRASH_CGROUP"
)

// crashAgents are the agents of the crash sequence and the check each runs
// as its next action after recovery, with the output it must print.
var crashAgents = []struct{ id, setup, check string }{
	// torn down before the crash: absent, rebuilt on demand from its record
	{"absent", writeFiles, sumFiles},
	// resident, restartable, retained under green pressure
	{"resident", "echo r > /opt/r && mkdir -p /var/lib/r && echo w > /workspace/w", "cat /opt/r /workspace/w"},
	// resident_only: a background process
	{"pinned", "echo p > /var/lib/p && (sleep 100 >/dev/null 2>&1 &)", "cat /var/lib/p"},
	// resident, an action in flight when the crash comes (child variant)
	{"busy", "echo b > /root/b", "cat /root/b"},
}

// actE is act without testing.TB, for the crash child.
func actE(ctx context.Context, m *Manager, b sandbox.Backend, a *controller.Agent, i int, shell string) (string, error) {
	a.Next = i
	id, err := m.Ensure(ctx, a)
	if err != nil {
		return "", err
	}
	r, err := b.Exec(ctx, id, sandbox.ExecRequest{Shell: shell, Timeout: 20 * time.Second, Background: agentcgroup.StartsBackground(shell)})
	if err != nil {
		return "", err
	}
	if r.ExitCode != 0 {
		return "", fmt.Errorf("%s exited %d: %s", shell, r.ExitCode, r.Stderr)
	}
	return string(r.Stdout), m.Boundary(ctx, a, controller.Outcome{Index: i, Sandbox: id})
}

// crashSequence runs the setup action and the check action of every crash
// agent, writing each check's output to wantDir/<agent>, then tears
// "absent" down. It returns the agents.
func crashSequence(ctx context.Context, m *Manager, b sandbox.Backend, wantDir string) (map[string]*controller.Agent, error) {
	agents := map[string]*controller.Agent{}
	for _, c := range crashAgents {
		a := agent(c.id, 4)
		agents[c.id] = a
		if _, err := actE(ctx, m, b, a, 0, c.setup); err != nil {
			return nil, fmt.Errorf("%s setup: %w", c.id, err)
		}
		out, err := actE(ctx, m, b, a, 1, c.check)
		if err != nil {
			return nil, fmt.Errorf("%s check: %w", c.id, err)
		}
		if err := os.WriteFile(filepath.Join(wantDir, c.id), []byte(out), 0o600); err != nil {
			return nil, err
		}
	}
	if err := m.Residency().Teardown(ctx, "absent"); err != nil {
		return nil, fmt.Errorf("tearing absent down: %w", err)
	}
	return agents, nil
}

// runChild is the crash child: it runs the sequence on the state under
// root, starts a long action in "busy", prints READY and waits to be killed.
func runChild(root string) int {
	fail := func(err error) int { fmt.Fprintln(os.Stderr, "crash child:", err); return 1 }
	layout, err := cgroup.Detect("/proc")
	if err != nil {
		return fail(err)
	}
	log := slog.New(slog.DiscardHandler)
	b, err := openBackend(root, os.Getenv(childCgroupEnv), layout, log)
	if err != nil {
		return fail(err)
	}
	h := newNotes().host(b, "ck")
	m, err := NewManager(Config{StateDir: filepath.Join(root, "residency"), TimeScale: 0.001, NoPageOut: true}, h, nil, log)
	if err != nil {
		return fail(err)
	}
	ctx := context.Background()
	agents, err := crashSequence(ctx, m, b, filepath.Join(root, "want"))
	if err != nil {
		return fail(err)
	}
	busy := agents["busy"]
	busy.Next = 2
	id, err := m.Ensure(ctx, busy)
	if err != nil {
		return fail(err)
	}
	go b.Exec(ctx, id, sandbox.ExecRequest{Shell: "echo late > /root/late; sleep 60"})
	time.Sleep(200 * time.Millisecond)
	fmt.Println(crashtest.ReadyLine)
	time.Sleep(time.Minute)
	return fail(fmt.Errorf("not killed"))
}

// checkRecovered opens a new backend and manager on e's state and checks
// that every crash agent is recovered and sees its files; it releases them
// and checks that nothing is left.
func checkRecovered(t *testing.T, e *liveEnv, wantResident []string) {
	b := e.backend()
	n := newNotes()
	var p pressureVar
	m := newManager(t, e, n.host(b, "rc"), &p)
	defer m.Close()
	rep := m.Recovered()
	slices.Sort(rep.Resident)
	if !slices.Equal(rep.Absent, []string{"absent"}) || !slices.Equal(rep.Resident, wantResident) || len(rep.Lost) != 0 {
		t.Errorf("recovered %+v, want resident %v, absent [absent], none lost", rep, wantResident)
	}
	for _, c := range crashAgents {
		want, err := os.ReadFile(filepath.Join(e.root, "want", c.id))
		if err != nil {
			t.Fatalf("expected output of %s: %v", c.id, err)
		}
		a := agent(c.id, 4)
		got, _ := act(t, m, b, a, 2, c.check)
		if got != string(want) {
			t.Errorf("%s after recovery prints %q, want %q", c.id, got, want)
		}
		act(t, m, b, a, 3, "true")
		if err := m.Release(lctx(t), a); err != nil {
			t.Errorf("Release(%s): %v", c.id, err)
		}
	}
	if live := n.live(t); len(live) != 0 {
		t.Errorf("sandboxes live after Release: %v", live)
	}
	if ids, _ := m.Host().List(context.Background()); len(ids) != 0 {
		t.Errorf("host still lists %v", ids)
	}
	if ents, _ := os.ReadDir(SalvageDir(e.resDir())); len(ents) != 0 {
		t.Errorf("salvaged layers left: %d", len(ents))
	}
	assertClean(t, e)
}

// TestLiveCrashInProcess abandons a manager and its backend without Close
// (the store's file lock is dropped, as a dying process would) and
// recovers with a new backend and manager on the same state.
func TestLiveCrashInProcess(t *testing.T) {
	e := newLiveEnv(t)
	if err := os.MkdirAll(filepath.Join(e.root, "want"), 0o700); err != nil {
		t.Fatal(err)
	}
	b := e.backend()
	var p pressureVar
	m := newManager(t, e, newNotes().host(b, "ip"), &p)
	if _, err := crashSequence(lctx(t), m, b, filepath.Join(e.root, "want")); err != nil {
		t.Fatal(err)
	}
	m.rm.Wait()
	m.st.Close() // the crash: nothing else is closed or destroyed
	checkRecovered(t, e, []string{"busy", "pinned", "resident"})
}

// TestLiveCrashKill runs the sequence in a child process killed with
// SIGKILL while an action is in flight, then recovers in this process.
func TestLiveCrashKill(t *testing.T) {
	e := newLiveEnv(t)
	if err := os.MkdirAll(filepath.Join(e.root, "want"), 0o700); err != nil {
		t.Fatal(err)
	}
	// A backend opened first records the parent cgroups libcontainer will
	// create in other hierarchies, so that cleanup removes them.
	e.backend()
	crashtest.KillWhenReady(t, []string{childEnv + "=" + e.root, childCgroupEnv + "=" + e.dom.Group().Path()}, 45*time.Second)
	checkRecovered(t, e, []string{"busy", "pinned", "resident"})
}
