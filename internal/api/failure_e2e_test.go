package api_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tenon-dev/tenon/internal/api"
)

// TestFailureResponses checks over the socket that an OOM-killed and a
// timed-out action say so: the failure kind, a message in words, the
// budget and the other agent's live sandbox.
func TestFailureResponses(t *testing.T) {
	d := startDaemon(t, daemonOpts{})
	ctx := context.Background()
	a, err := d.client.CreateAgent(ctx, api.CreateAgentRequest{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := d.client.CreateAgent(ctx, api.CreateAgentRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.client.Exec(ctx, b, api.ExecRequest{Command: "true"}); err != nil {
		t.Fatal(err)
	}

	oom, err := d.client.Exec(ctx, a, api.ExecRequest{Command: "oom"})
	if err != nil {
		t.Fatal(err)
	}
	if !oom.OOM || oom.Failure != api.FailureOOM || !strings.Contains(oom.Message, "out of memory") {
		t.Errorf("OOM response: failure %q message %q", oom.Failure, oom.Message)
	}
	if oom.BudgetBytes != 1<<30 || len(oom.Others) != 1 || oom.Others[0].Agent != b || !strings.Contains(oom.Message, b) {
		t.Errorf("OOM response: budget %d others %+v, want 1 GiB and agent %s", oom.BudgetBytes, oom.Others, b)
	}

	to, err := d.client.Exec(ctx, a, api.ExecRequest{Command: "sleep 5", TimeoutS: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	if !to.TimedOut || to.Failure != api.FailureTimeout || !strings.Contains(to.Message, "timeout of 100ms") {
		t.Errorf("timeout response: timed out %v failure %q message %q", to.TimedOut, to.Failure, to.Message)
	}

	ok, err := d.client.Exec(ctx, a, api.ExecRequest{Command: "exit 2"})
	if err != nil {
		t.Fatal(err)
	}
	if ok.Failure != "" || ok.Message != "" {
		t.Errorf("a failing command is not a failure of the action: %q %q", ok.Failure, ok.Message)
	}
}
