package api_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/api"
	"github.com/tenon-dev/tenon/internal/api/client"
	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/disk"
	"github.com/tenon-dev/tenon/internal/live"
	"github.com/tenon-dev/tenon/internal/residency/managed"
	"github.com/tenon-dev/tenon/internal/sandbox"
	"github.com/tenon-dev/tenon/internal/sandbox/process"
)

// TestHostileDaemon reproduces issue 22's findings 7, 8, 12 and 14 on the
// process backend: a FIFO made in the sandbox is refused at once, the
// sandbox (its /tmp) survives a timeout, a client that hangs up and a
// relative cwd, an image the backend lacks is refused at create, and
// binary output comes back exactly in stdout_b64.
func TestHostileDaemon(t *testing.T) {
	hostileDaemon(t, liveBackend(t, 1<<30))
}

// hostileDaemon is TestHostileDaemon on backend be (the process or the
// docker backend).
func hostileDaemon(t *testing.T, be sandbox.Backend) {
	d := startDaemon(t, daemonOpts{backend: be})
	c := d.client
	ctx := context.Background()

	// an image the backend does not have is refused at once
	_, err := c.CreateAgent(ctx, api.CreateAgentRequest{Image: "tenon-test-no-such-image:22.04"})
	if !client.IsStatus(err, 400) || !strings.Contains(err.Error(), "tenon-test-no-such-image:22.04") {
		t.Errorf("create with an image the backend lacks = %v, want 400 naming it", err)
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

// TestHostileDaemonDiskLimits reproduces issue 22's finding 6 through the daemon:
// `fallocate -l 1G` in /workspace and in /tmp meets the workspace's and the
// sandbox's disk limits (64 MiB each here), and the response says which is
// full; deleting the agent unmounts and removes its workspace image.
func TestHostileDaemonDiskLimits(t *testing.T) {
	if err := disk.Check(); err != nil {
		t.Skipf("disk limits: %v", err)
	}
	be := liveBackend(t, 1<<30, func(c *process.Config) { c.DiskMax = 64 << 20 })
	state := t.TempDir()
	d := startDaemon(t, daemonOpts{backend: be, state: state, workspaceMax: 64 << 20})
	c := d.client
	ctx := context.Background()
	id, err := c.CreateAgent(ctx, api.CreateAgentRequest{Files: map[string]string{"keep.txt": "kept"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ dir, what string }{{"/workspace", "the workspace"}, {"/tmp", "outside the workspace"}} {
		res, err := c.Exec(ctx, id, api.ExecRequest{Command: "fallocate -l 1G " + tc.dir + "/big", TimeoutS: 20})
		if err != nil {
			t.Fatal(err)
		}
		if res.ExitCode == 0 || !res.DiskFull || res.Failure != api.FailureDisk || !strings.Contains(res.Message, tc.what) ||
			!strings.Contains(res.Stderr, "No space left on device") {
			t.Errorf("fallocate -l 1G in %s = %+v; want a failure naming %s as full", tc.dir, res, tc.what)
		}
		res, err = c.Exec(ctx, id, api.ExecRequest{Command: "rm " + tc.dir + "/big", TimeoutS: 20})
		if err != nil || res.ExitCode != 0 || res.DiskFull {
			t.Errorf("rm in %s = %+v, %v; want room again", tc.dir, res, err)
		}
	}
	if b, err := c.GetFile(ctx, id, "keep.txt"); err != nil || string(b) != "kept" {
		t.Errorf("seeded file = %q, %v", b, err)
	}
	ws := filepath.Join(state, "workspaces", id)
	if err := c.DeleteAgent(ctx, id); err != nil {
		t.Fatal(err)
	}
	if m, _ := os.ReadFile("/proc/self/mountinfo"); strings.Contains(string(m), ws) {
		t.Errorf("workspace %s still mounted after delete", ws)
	}
	if _, err := os.Stat(ws + ".img"); !os.IsNotExist(err) {
		t.Errorf("workspace image after delete: %v, want gone", err)
	}
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

// TestHostileDaemonDiskLimitsResidency is finding 6 under a policy with
// residency (the manager tenon serve builds: managed.Config.KeepWorkspaces):
// the agent's workspace is a 64 MiB disk image; a teardown leaves it
// mounted in place with its files (readable and writable through the files
// API while the agent has no sandbox); the rematerialized sandbox runs
// over the same limited workspace, where `fallocate -l 1G` is refused as a
// full workspace; a restart of the daemon keeps it; deleting the agent
// unmounts and removes it.
func TestHostileDaemonDiskLimitsResidency(t *testing.T) {
	if err := disk.Check(); err != nil {
		t.Skipf("disk limits: %v", err)
	}
	be := liveBackend(t, 1<<30, func(c *process.Config) { c.DiskMax = 64 << 20 })
	state, resDir := t.TempDir(), t.TempDir()
	var mgr *managed.Manager
	opts := daemonOpts{backend: be, state: state, workspaceMax: 64 << 20, policy: "tenon-no-admission", live: live.Options{
		Residency: func(h controller.SandboxHost, v live.ResidencyViews) (controller.Sandboxes, io.Closer, error) {
			m, err := managed.NewManager(managed.Config{StateDir: resDir, KeepWorkspaces: true, NoPageOut: true}, h, v.Pressure, nil)
			mgr = m
			return m, m, err
		},
	}}
	d := startDaemon(t, opts)
	if mgr == nil {
		t.Fatal("the policy built no residency manager")
	}
	c := d.client
	ctx := context.Background()
	id, err := c.CreateAgent(ctx, api.CreateAgentRequest{Files: map[string]string{"keep.txt": "kept"}})
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(state, "workspaces", id)
	exec := func(cmd string) api.ExecResponse {
		t.Helper()
		res, err := c.Exec(ctx, id, api.ExecRequest{Command: cmd, TimeoutS: 20})
		if err != nil {
			t.Fatalf("exec %q: %v", cmd, err)
		}
		return res
	}
	first := exec("echo one > /workspace/a && df -k --output=size /workspace | tail -1")
	if first.ExitCode != 0 || !limited(first.Stdout) {
		t.Fatalf("first action = %+v; want /workspace limited to 64 MiB", first)
	}

	if err := mgr.Residency().Teardown(ctx, id); err != nil {
		t.Fatalf("teardown: %v", err)
	}
	if a, err := c.GetAgent(ctx, id); err != nil || a.Residency != api.ResidencyAbsent {
		t.Fatalf("after the teardown: agent %+v, %v; want absent", a, err)
	}
	if !mounted(t, ws) {
		t.Errorf("workspace %s not mounted while the agent is absent", ws)
	}
	if b, err := c.GetFile(ctx, id, "a"); err != nil || string(b) != "one\n" {
		t.Errorf("GET a while absent = %q, %v", b, err)
	}
	if err := c.PutFile(ctx, id, "b", []byte("two\n")); err != nil {
		t.Errorf("PUT b while absent: %v", err)
	}

	res := exec("cat /workspace/keep.txt /workspace/a /workspace/b; df -k --output=size /workspace | tail -1; fallocate -l 1G /workspace/big")
	if res.Sandbox == first.Sandbox {
		t.Errorf("the action after the teardown ran in sandbox %s, want a rematerialized one", res.Sandbox)
	}
	if !strings.HasPrefix(res.Stdout, "keptone\ntwo\n") || !limited(strings.TrimPrefix(res.Stdout, "keptone\ntwo\n")) {
		t.Errorf("rematerialized workspace: stdout %q; want its files and the 64 MiB limit", res.Stdout)
	}
	if !res.DiskFull || res.Failure != api.FailureDisk || !strings.Contains(res.Message, "the workspace") {
		t.Errorf("fallocate -l 1G after rematerialization = %+v; want the workspace full", res)
	}
	exec("rm -f /workspace/big")

	if err := d.stop(); err != nil {
		t.Fatal(err)
	}
	d = startDaemon(t, opts)
	c = d.client
	if b, err := c.GetFile(ctx, id, "a"); err != nil || string(b) != "one\n" {
		t.Errorf("GET a after a restart = %q, %v; want the workspace kept", b, err)
	}
	if res := exec("cat /workspace/b; df -k --output=size /workspace | tail -1"); !strings.HasPrefix(res.Stdout, "two\n") || !limited(strings.TrimPrefix(res.Stdout, "two\n")) {
		t.Errorf("after a restart: stdout %q; want b and the 64 MiB limit", res.Stdout)
	}
	if err := c.DeleteAgent(ctx, id); err != nil {
		t.Fatal(err)
	}
	if mounted(t, ws) {
		t.Errorf("workspace %s still mounted after delete", ws)
	}
	if _, err := os.Stat(ws + ".img"); !os.IsNotExist(err) {
		t.Errorf("workspace image after delete: %v, want gone", err)
	}
}

// limited reports whether df's size column (KiB) says a file system of
// about 64 MiB (ext4 takes a few MiB of it).
func limited(dfSize string) bool {
	kib, err := strconv.Atoi(strings.TrimSpace(dfSize))
	return err == nil && kib > 48<<10 && kib <= 64<<10
}

// mounted reports whether dir is a mount point in this mount namespace.
func mounted(t *testing.T, dir string) bool {
	t.Helper()
	m, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(m), "\n") {
		if f := strings.Fields(line); len(f) > 4 && f[4] == dir {
			return true
		}
	}
	return false
}

// TestHostileLargeOutput is finding 10 for exec output: an action that
// writes 256 MiB to each of stdout and stderr on the process backend
// comes back with each stream cut at the output limit (1 MiB) and marked
// truncated, the daemon's memory grows by far less than what was written,
// and the agent serves its next action.
func TestHostileLargeOutput(t *testing.T) {
	be := liveBackend(t, 1<<30)
	d := startDaemon(t, daemonOpts{backend: be})
	c := d.client
	ctx := context.Background()
	id, err := c.CreateAgent(ctx, api.CreateAgentRequest{})
	if err != nil {
		t.Fatal(err)
	}
	peak := memPeak()
	res, err := c.Exec(ctx, id, api.ExecRequest{TimeoutS: 60,
		Command: "head -c 256M /dev/zero | tr '\\0' o; head -c 256M /dev/zero | tr '\\0' e >&2; echo done >&2"})
	grown := peak()
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || len(res.Stdout) != 1<<20 || len(res.Stderr) != 1<<20 || !res.StdoutTruncated || !res.StderrTruncated ||
		strings.Trim(res.Stdout, "o") != "" || strings.Trim(res.Stderr, "e") != "" {
		t.Errorf("256 MiB on each stream: exit %d, stdout %d bytes (truncated %v), stderr %d bytes (truncated %v); want 1 MiB of each, truncated",
			res.ExitCode, len(res.Stdout), res.StdoutTruncated, len(res.Stderr), res.StderrTruncated)
	}
	t.Logf("daemon memory peak growth %d MiB for 512 MiB of output", grown>>20)
	if grown > 64<<20 {
		t.Errorf("daemon memory grew by %d MiB for 512 MiB of output cut at 1 MiB a stream", grown>>20)
	}
	if r, err := c.Exec(ctx, id, api.ExecRequest{Command: "echo ok", TimeoutS: 20}); err != nil || r.Stdout != "ok\n" || r.Sandbox != res.Sandbox {
		t.Errorf("next action = %+v, %v; want ok in the same sandbox", r, err)
	}
}
