package api_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/api"
	"github.com/tenon-dev/tenon/internal/sandbox"
)

// TestLoad runs TENON_LOAD_AGENTS (default 200) concurrent agents, each
// issuing TENON_LOAD_ACTIONS (default 10) echo actions through the daemon's
// socket on the process backend, and compares per-action latency with
// calling the backend directly on the same number of sandboxes. It runs
// only with TENON_LOAD=1 (it takes tens of seconds) and is bounded by a
// 3-minute deadline.
func TestLoad(t *testing.T) {
	if os.Getenv("TENON_LOAD") == "" {
		t.Skip("load test runs with TENON_LOAD=1")
	}
	agents := envInt("TENON_LOAD_AGENTS", 200)
	actions := envInt("TENON_LOAD_ACTIONS", 10)
	be := liveBackend(t, 8<<30)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	// Direct: the same load straight on the backend.
	ids := make([]string, agents)
	for i := range ids {
		ids[i] = fmt.Sprintf("tenon-test-api-load-%d-%d", os.Getpid(), i)
		if _, err := be.Create(ctx, sandbox.Spec{ID: ids[i], Workspace: t.TempDir()}); err != nil {
			t.Fatalf("create: %v", err)
		}
	}
	direct, directWall := measure(agents, actions, func(i int) error {
		r, err := be.Exec(ctx, ids[i], sandbox.ExecRequest{Shell: "echo hi", Timeout: 30 * time.Second})
		if err == nil && string(r.Stdout) != "hi\n" {
			err = fmt.Errorf("stdout %q", r.Stdout)
		}
		return err
	})
	seqDirect, _ := measure(1, 200, func(int) error {
		_, err := be.Exec(ctx, ids[0], sandbox.ExecRequest{Shell: "echo hi", Timeout: 30 * time.Second})
		return err
	})
	for _, id := range ids {
		_ = be.Destroy(ctx, id)
	}
	if direct.errs > 0 {
		t.Fatalf("direct: %d errors, first %v", direct.errs, direct.first)
	}

	d := startDaemon(t, daemonOpts{backend: be})
	aids := make([]string, agents)
	for i := range aids {
		id, err := d.client.CreateAgent(ctx, api.CreateAgentRequest{})
		if err != nil {
			t.Fatal(err)
		}
		aids[i] = id
		if _, err := d.client.Exec(ctx, id, api.ExecRequest{Command: "true"}); err != nil { // create the sandbox
			t.Fatal(err)
		}
	}
	via, viaWall := measure(agents, actions, func(i int) error {
		r, err := d.client.Exec(ctx, aids[i], api.ExecRequest{Command: "echo hi", TimeoutS: 30})
		if err == nil && r.Stdout != "hi\n" {
			err = fmt.Errorf("stdout %q", r.Stdout)
		}
		return err
	})
	if via.errs > 0 {
		t.Fatalf("api: %d errors, first %v", via.errs, via.first)
	}
	seqVia, _ := measure(1, 200, func(int) error {
		_, err := d.client.Exec(ctx, aids[0], api.ExecRequest{Command: "echo hi"})
		return err
	})
	n := agents * actions
	t.Logf("%d agents x %d echo actions, process backend", agents, actions)
	t.Logf("direct: %.0f actions/s  p50 %v  p99 %v", float64(n)/directWall.Seconds(), direct.p(50), direct.p(99))
	t.Logf("api:    %.0f requests/s  p50 %v  p99 %v", float64(n)/viaWall.Seconds(), via.p(50), via.p(99))
	t.Logf("added under load:  p50 %v  p99 %v", via.p(50)-direct.p(50), via.p(99)-direct.p(99))
	t.Logf("one agent, 200 sequential actions: direct p50 %v p99 %v; api p50 %v p99 %v; added p50 %v p99 %v",
		seqDirect.p(50), seqDirect.p(99), seqVia.p(50), seqVia.p(99), seqVia.p(50)-seqDirect.p(50), seqVia.p(99)-seqDirect.p(99))
}

type latencies struct {
	d     []time.Duration
	errs  int
	first error
}

func (l *latencies) p(q int) time.Duration {
	if len(l.d) == 0 {
		return 0
	}
	return l.d[min(len(l.d)-1, len(l.d)*q/100)]
}

// measure runs fn(i) actions times for each of n workers at once.
func measure(n, actions int, fn func(i int) error) (*latencies, time.Duration) {
	var mu sync.Mutex
	l := &latencies{}
	var wg sync.WaitGroup
	t0 := time.Now()
	for i := range n {
		wg.Go(func() {
			for range actions {
				s := time.Now()
				err := fn(i)
				el := time.Since(s)
				mu.Lock()
				l.d = append(l.d, el)
				if err != nil {
					l.errs++
					if l.first == nil {
						l.first = err
					}
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	wall := time.Since(t0)
	slices.Sort(l.d)
	return l, wall
}

func envInt(k string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(k)); err == nil && v > 0 {
		return v
	}
	return def
}
