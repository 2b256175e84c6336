package api_test

import (
	"context"
	"testing"

	"github.com/tenon-dev/tenon/internal/api"
	"github.com/tenon-dev/tenon/internal/predict"
)

// TestStatusAgentSlots: the status carries the policy's agent slots
// (policy.AgentSlots, what a node agent publishes) under agent pacing,
// and none under a policy without it.
func TestStatusAgentSlots(t *testing.T) {
	ctx := context.Background()
	st, err := startDaemon(t, daemonOpts{policy: "eager"}).client.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.AgentSlots != nil {
		t.Fatalf("eager: agent_slots = %d, want none (no agent pacing)", *st.AgentSlots)
	}
	c := startDaemon(t, daemonOpts{policy: "tenon", predictor: predict.ClassPrior{Default: 32 << 20}}).client
	if st, err = c.Status(ctx); err != nil {
		t.Fatal(err)
	}
	// A fresh host knows no floor, first peak or reserve: one at a time.
	if st.AgentSlots == nil || *st.AgentSlots != 1 {
		t.Fatalf("tenon, fresh: agent_slots = %v, want 1", st.AgentSlots)
	}
	id, err := c.CreateAgent(ctx, api.CreateAgentRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, id, api.ExecRequest{Command: "true"}); err != nil {
		t.Fatal(err)
	}
	// One agent runs and its sandbox's floor (the fake backend's 16 MiB)
	// is measured: many more fit in 1 GiB.
	if st, err = c.Status(ctx); err != nil {
		t.Fatal(err)
	}
	if st.AgentSlots == nil || *st.AgentSlots < 10 {
		t.Fatalf("tenon, one agent with a 16 MiB floor in 1 GiB: agent_slots = %v, want at least 10", st.AgentSlots)
	}
}
