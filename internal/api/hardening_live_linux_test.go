package api_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/api"
	"github.com/tenon-dev/tenon/internal/api/client"
)

// TestLiveHardening reproduces issue 22's findings 7, 8, 12 and 14 on the
// process backend: a FIFO made in the sandbox is refused at once, the
// sandbox (its /tmp) survives a timeout, a client that hangs up and a
// relative cwd, an image the backend lacks is refused at create, and
// binary output comes back exactly in stdout_b64.
func TestLiveHardening(t *testing.T) {
	be := liveBackend(t, 1<<30)
	d := startDaemon(t, daemonOpts{backend: be})
	c := d.client
	ctx := context.Background()

	_, err := c.CreateAgent(ctx, api.CreateAgentRequest{Image: "ubuntu:22.04"})
	if !client.IsStatus(err, 400) || !strings.Contains(err.Error(), `only "host"`) {
		t.Errorf("create with image ubuntu:22.04 = %v, want 400 naming what the backend has", err)
	}

	id, err := c.CreateAgent(ctx, api.CreateAgentRequest{})
	if err != nil {
		t.Fatal(err)
	}
	exec := func(ctx context.Context, req api.ExecRequest) (api.ExecResponse, error) {
		if req.TimeoutS == 0 {
			req.TimeoutS = 20
		}
		return c.Exec(ctx, id, req)
	}
	first, err := exec(ctx, api.ExecRequest{Command: "echo kept > /tmp/keep && mkfifo /workspace/fifo"})
	if err != nil || first.ExitCode != 0 {
		t.Fatalf("setup = %+v, %v", first, err)
	}

	t.Run("fifo", func(t *testing.T) {
		done := make(chan error, 1)
		go func() { _, err := c.GetFile(ctx, id, "fifo"); done <- err }()
		select {
		case err := <-done:
			if !client.IsStatus(err, 400) {
				t.Errorf("GET fifo = %v, want 400", err)
			}
		case <-time.After(5 * time.Second):
			_, _ = exec(ctx, api.ExecRequest{Command: "echo > /workspace/fifo"}) // unblock it
			t.Fatal("GET fifo did not answer within 5 s")
		}
	})

	t.Run("timeout keeps the sandbox", func(t *testing.T) {
		res, err := exec(ctx, api.ExecRequest{Command: "sleep 30", TimeoutS: 0.5})
		if err != nil || !res.TimedOut {
			t.Fatalf("exec past its timeout = %+v, %v; want timed_out", res, err)
		}
		checkKept(t, c, id, first.Sandbox)
	})
	t.Run("client hang-up keeps the sandbox", func(t *testing.T) {
		cctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		_, err := exec(cctx, api.ExecRequest{Command: "sleep 30"})
		cancel()
		if err == nil {
			t.Fatal("exec with a client that hung up succeeded")
		}
		waitFor(t, func() bool { st, err := c.Status(ctx); return err == nil && st.Running == 0 })
		checkKept(t, c, id, first.Sandbox)
	})
	t.Run("relative cwd is 400 and keeps the sandbox", func(t *testing.T) {
		_, err := exec(ctx, api.ExecRequest{Command: "pwd", Cwd: "sub"})
		if !client.IsStatus(err, 400) || !strings.Contains(err.Error(), "absolute") {
			t.Errorf("relative cwd = %v, want 400 saying it must be absolute", err)
		}
		checkKept(t, c, id, first.Sandbox)
	})

	t.Run("binary output", func(t *testing.T) {
		res, err := exec(ctx, api.ExecRequest{Command: `printf 'a\377\376b'; printf 'ok' >&2`})
		if err != nil {
			t.Fatal(err)
		}
		if want := []byte("a\xff\xfeb"); !bytes.Equal(res.StdoutB64, want) {
			t.Errorf("stdout_b64 = %q, want %q", res.StdoutB64, want)
		}
		if res.Stdout != "a\ufffd\ufffdb" || res.Stderr != "ok" || res.StderrB64 != nil {
			t.Errorf("stdout %q, stderr %q, stderr_b64 %q; want the replaced text, ok and no stderr_b64", res.Stdout, res.Stderr, res.StderrB64)
		}
	})
}

// checkKept checks that agent id still runs in sandbox sb with its /tmp.
func checkKept(t *testing.T, c *client.Client, id, sb string) {
	t.Helper()
	res, err := c.Exec(context.Background(), id, api.ExecRequest{Command: "cat /tmp/keep", TimeoutS: 20})
	if err != nil {
		t.Fatal(err)
	}
	if res.Sandbox != sb || strings.TrimSpace(res.Stdout) != "kept" {
		t.Errorf("after the action: sandbox %s (want %s), /tmp/keep %q (want kept)", res.Sandbox, sb, res.Stdout)
	}
}
