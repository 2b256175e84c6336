package api_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/api"
	"github.com/tenon-dev/tenon/internal/api/client"
)

func TestAgentLifecycle(t *testing.T) {
	for _, pol := range []string{"eager", "gate", "static-2"} {
		t.Run(pol, func(t *testing.T) { testLifecycle(t, pol) })
	}
}

func testLifecycle(t *testing.T, pol string) {
	d := startDaemon(t, daemonOpts{policy: pol})
	c := d.client
	ctx := context.Background()

	id, err := c.CreateAgent(ctx, api.CreateAgentRequest{Files: map[string]string{"src/main.py": "print(1)\n"}, Labels: map[string]string{"task": "t1"}})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	got, err := c.GetFile(ctx, id, "src/main.py")
	if err != nil || string(got) != "print(1)\n" {
		t.Fatalf("seeded file = %q, %v", got, err)
	}

	tests := []struct {
		name     string
		command  string
		wantExit int
	}{
		{name: "success", command: "true", wantExit: 0},
		{name: "failing command", command: "exit 3", wantExit: 3},
		{name: "short sleep", command: "sleep 0.05", wantExit: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := c.Exec(ctx, id, api.ExecRequest{Command: tt.command})
			if err != nil {
				t.Fatalf("exec: %v", err)
			}
			if res.ExitCode != tt.wantExit || res.Sandbox == "" {
				t.Errorf("exit %d sandbox %q, want exit %d in a sandbox", res.ExitCode, res.Sandbox, tt.wantExit)
			}
		})
	}

	if err := c.PutFile(ctx, id, "out/result.txt", []byte("42")); err != nil {
		t.Fatalf("put: %v", err)
	}
	if b, err := c.GetFile(ctx, id, "out/result.txt"); err != nil || string(b) != "42" {
		t.Errorf("get = %q, %v", b, err)
	}
	a, err := c.GetAgent(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if a.Actions != len(tests) || a.Sandbox == "" || a.Labels["task"] != "t1" {
		t.Errorf("agent = %+v, want %d actions, resident, label", a, len(tests))
	}
	list, err := c.ListAgents(ctx)
	if err != nil || len(list) != 1 || list[0].ID != id {
		t.Errorf("list = %+v, %v", list, err)
	}
	st, err := c.Status(ctx)
	if err != nil || st.Resident != 1 || st.Policy != pol || st.Pressure != api.PressureGreen {
		t.Errorf("status = %+v, %v", st, err)
	}
	if err := c.DeleteAgent(ctx, id); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, err := c.GetAgent(ctx, id); !client.IsStatus(err, http.StatusNotFound) {
		t.Errorf("get after delete: %v, want 404", err)
	}
	if _, err := os.Stat(a.Workspace); !os.IsNotExist(err) {
		t.Errorf("workspace %s still exists: %v", a.Workspace, err)
	}
}

// TestQueueingUnderStatic1 shows the policy's queue: with static-1 the
// second agent's action is queued while the first agent holds the slot,
// then runs once the first agent is deleted.
func TestQueueingUnderStatic1(t *testing.T) {
	d := startDaemon(t, daemonOpts{policy: "static-1"})
	c := d.client
	ctx := context.Background()
	first, err := c.CreateAgent(ctx, api.CreateAgentRequest{})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { a, err := c.GetAgent(ctx, first); return err == nil && a.State != api.StateQueued })
	second, err := c.CreateAgent(ctx, api.CreateAgentRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var r1, r2 api.ExecResponse
	var e1, e2 error
	wg.Go(func() { r1, e1 = c.Exec(ctx, first, api.ExecRequest{Command: "sleep 0.3"}) })
	wg.Go(func() { r2, e2 = c.Exec(ctx, second, api.ExecRequest{Command: "true"}) })
	waitFor(t, func() bool {
		st, err := c.Status(ctx)
		return err == nil && st.QueuedAgents == 1 && st.QueuedActions == 1 && st.Running == 1
	})
	a2, err := c.GetAgent(ctx, second)
	if err != nil || a2.State != api.StateQueued {
		t.Errorf("second agent = %+v, %v; want state queued", a2, err)
	}
	time.Sleep(400 * time.Millisecond) // the first action ends; the second stays queued
	if st, _ := c.Status(ctx); st.QueuedActions != 1 {
		t.Errorf("queued actions = %d after the first action, want 1 (the slot is the agent's)", st.QueuedActions)
	}
	if err := c.DeleteAgent(ctx, first); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if e1 != nil || e2 != nil {
		t.Fatalf("exec errors: %v, %v", e1, e2)
	}
	if r1.QueuedS > 0.1 {
		t.Errorf("first action queued %.3fs, want ~0", r1.QueuedS)
	}
	if r2.QueuedS < 0.3 {
		t.Errorf("second action queued %.3fs, want >= 0.3s (until the first agent left)", r2.QueuedS)
	}
	if r2.ExitCode != 0 || r2.Sandbox == "" {
		t.Errorf("second action = %+v, want it run", r2)
	}
}

// waitFor polls cond for up to 30 s: a generous margin, since 5 s ran
// out in CI on a loaded 2-core machine (TestHostileLargeBodies, 9f0263c).
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 30 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

var _ = filepath.Join
var _ = strings.Contains
