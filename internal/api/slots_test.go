package api_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/api"
	"github.com/tenon-dev/tenon/internal/api/client"
)

// TestHostileRecoveredAgentsSlots reproduces issue 22's finding 9: after a
// restart under static-4 with four idle agents in the registry, a new
// agent runs at once, and so do the recovered ones.
func TestHostileRecoveredAgentsSlots(t *testing.T) {
	state := t.TempDir()
	o := daemonOpts{policy: "static-4", state: state, queueTimeout: 5 * time.Second, slotIdle: time.Hour}
	d := startDaemon(t, o)
	ctx := context.Background()
	var old []string
	for range 4 {
		id, err := d.client.CreateAgent(ctx, api.CreateAgentRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.client.Exec(ctx, id, api.ExecRequest{Command: "true"}); err != nil {
			t.Fatal(err)
		}
		old = append(old, id)
	}
	if err := d.stop(); err != nil {
		t.Fatal(err)
	}
	d2 := startDaemon(t, o)
	c := d2.client
	st, err := c.Status(ctx)
	if err != nil || st.QueuedAgents != 0 {
		t.Fatalf("status after restart = %+v, %v; want no agent queued", st, err)
	}
	id, err := c.CreateAgent(ctx, api.CreateAgentRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := c.Exec(ctx, id, api.ExecRequest{Command: "true"}); err != nil || r.QueuedS > 1 {
		t.Fatalf("new agent after a restart with 4 recovered agents = %+v, %v; want it run at once", r, err)
	}
	// Three recovered agents take the three slots left.
	for _, id := range old[:3] {
		if r, err := c.Exec(ctx, id, api.ExecRequest{Command: "true"}); err != nil || r.ExitCode != 0 {
			t.Fatalf("recovered agent %s = %+v, %v", id, r, err)
		}
	}
}

// TestHostileQueueDeadline: under static-1, with the slot held by a busy
// agent, another agent's action fails after QueueTimeout with 503 and a
// message that says what to do; its agent keeps its place in the queue.
func TestHostileQueueDeadline(t *testing.T) {
	d := startDaemon(t, daemonOpts{policy: "static-1", queueTimeout: 300 * time.Millisecond, slotIdle: time.Hour})
	c := d.client
	ctx := context.Background()
	first, err := c.CreateAgent(ctx, api.CreateAgentRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, first, api.ExecRequest{Command: "true"}); err != nil {
		t.Fatal(err)
	}
	second, err := c.CreateAgent(ctx, api.CreateAgentRequest{})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = c.Exec(ctx, second, api.ExecRequest{Command: "true"})
	if !client.IsStatus(err, 503) || !strings.Contains(err.Error(), "not admitted within 300ms") || !strings.Contains(err.Error(), "--queue-timeout") {
		t.Fatalf("queued exec = %v, want 503 naming the deadline and the flag", err)
	}
	if el := time.Since(start); el < 300*time.Millisecond || el > 3*time.Second {
		t.Errorf("queued exec answered after %s, want about 300ms", el)
	}
	if a, err := c.GetAgent(ctx, second); err != nil || a.State != api.StateQueued {
		t.Errorf("second agent after the timeout = %+v, %v; want still queued", a, err)
	}
}

// TestIdleAgentGivesSlotBack: under static-1 an agent idle for SlotIdle
// gives its slot to one that waits, and gets it back in turn.
func TestIdleAgentGivesSlotBack(t *testing.T) {
	d := startDaemon(t, daemonOpts{policy: "static-1", queueTimeout: 5 * time.Second, slotIdle: 100 * time.Millisecond})
	c := d.client
	ctx := context.Background()
	first, err := c.CreateAgent(ctx, api.CreateAgentRequest{})
	if err != nil {
		t.Fatal(err)
	}
	r1, err := c.Exec(ctx, first, api.ExecRequest{Command: "true"})
	if err != nil {
		t.Fatal(err)
	}
	second, err := c.CreateAgent(ctx, api.CreateAgentRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := c.Exec(ctx, second, api.ExecRequest{Command: "true"}); err != nil || r.ExitCode != 0 {
		t.Fatalf("second agent behind an idle one = %+v, %v; want it run", r, err)
	}
	r, err := c.Exec(ctx, first, api.ExecRequest{Command: "true"})
	if err != nil || r.Sandbox != r1.Sandbox {
		t.Fatalf("first agent again = %+v, %v; want it run in its kept sandbox %s", r, err, r1.Sandbox)
	}
}
