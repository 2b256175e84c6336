package docker_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/client"

	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/live"
	"github.com/tenon-dev/tenon/internal/policy"
	"github.com/tenon-dev/tenon/internal/replay"
	"github.com/tenon-dev/tenon/internal/sandbox/docker"
	"github.com/tenon-dev/tenon/internal/trajectory"
)

// syncBuffer is an event log safe for the replay's concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// TestReplayRetriesKilledContainer: a container killed behind tenon's back
// (docker kill) while an action runs fails that action with a reason naming
// the stopped container, and replay retries the workflow in a fresh
// sandbox, which completes.
func TestReplayRetriesKilledContainer(t *testing.T) {
	be := docker.NewTestBackend(t, 1<<30)
	cli := be.Client().(*client.Client)
	wf := trajectory.Workflow{Version: trajectory.Version, ID: "killed", Actions: []trajectory.Action{
		{Class: "bash", Command: "echo a", Run: "echo a > /workspace/a"},
		{Class: "bash", Command: "sleep", Run: "sleep 4"},
		{Class: "bash", Command: "cat", Run: "cat /workspace/a"},
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Kill the first container once the second action's sleep runs in it.
	killed := make(chan string, 1)
	go func() {
		defer close(killed)
		for ctx.Err() == nil {
			time.Sleep(50 * time.Millisecond)
			ids, err := docker.ListSandboxes(ctx, cli, be.Domain())
			if err != nil || len(ids) == 0 {
				continue
			}
			top, err := cli.ContainerTop(ctx, ids[0], nil)
			if err != nil || !strings.Contains(strings.Join(flatten(top.Processes), " "), "sleep 4") {
				continue
			}
			if err := cli.ContainerKill(ctx, ids[0], "KILL"); err != nil {
				t.Errorf("docker kill: %v", err)
			}
			killed <- ids[0]
			return
		}
	}()
	var events syncBuffer
	res, err := replay.Run(ctx, replay.Config{
		Workflows: []trajectory.Workflow{wf}, Backend: be, Policy: eagerPolicy(t),
		Budget: 1 << 30, WorkspaceRoot: t.TempDir(), EventLog: &events,
	})
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	if <-killed == "" {
		t.Fatal("the test never saw the action running to kill its container")
	}
	w := res.Workflows[0]
	if !w.Completed || w.Attempts != 2 || w.Lost != 1 {
		t.Fatalf("workflow %+v: want completed on attempt 2 after 1 lost sandbox", w)
	}
	var retry, lost *controller.Event
	dec := json.NewDecoder(bytes.NewReader(events.b.Bytes()))
	for {
		var e controller.Event
		if dec.Decode(&e) != nil {
			break
		}
		switch e.Kind {
		case controller.EventRetry:
			retry = &e
		case controller.EventSandboxLost:
			lost = &e
		}
	}
	if lost == nil || !strings.Contains(lost.Error, "stopped") {
		t.Errorf("sandbox-lost event %+v: want an error saying the container stopped", lost)
	}
	if retry == nil || retry.Reason != "sandbox_lost" || retry.Attempt != 2 {
		t.Errorf("retry event %+v: want attempt 2 for reason sandbox_lost", retry)
	}
}

func flatten(rows [][]string) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r...)
	}
	return out
}

// eagerPolicy is the eager policy on the live adapter.
func eagerPolicy(t *testing.T) controller.Policy {
	t.Helper()
	p, err := live.Build("eager", policy.Options{}, live.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}
