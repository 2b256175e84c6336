package api_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/tenon-dev/tenon/internal/api"
	"github.com/tenon-dev/tenon/internal/api/client"
	"github.com/tenon-dev/tenon/internal/cgroup/cgrouptest"
	"github.com/tenon-dev/tenon/internal/imagestore"
	"github.com/tenon-dev/tenon/internal/imagestore/imagetest"
	"github.com/tenon-dev/tenon/internal/sandbox/process"
)

// liveBackend opens a workload domain and a process backend in it (its
// Config changed by opts), or skips naming the missing feature. Both are
// closed at cleanup.
func liveBackend(t *testing.T, budget int64, opts ...func(*process.Config)) *process.Backend {
	t.Helper()
	layout := cgrouptest.Live(t, "live api test")
	log := slog.New(slog.DiscardHandler)
	name := fmt.Sprintf("tenon-test-api-%d", os.Getpid())
	dom := cgrouptest.Domain(t, layout, name, budget)
	cfg := process.Config{StateDir: t.TempDir(), CgroupParent: dom.Group().Path(), Layout: layout, Logger: log}
	for _, o := range opts {
		o(&cfg)
	}
	be, err := process.New(cfg)
	if err != nil {
		t.Skipf("process backend not available: %v", err)
	}
	t.Cleanup(func() {
		if err := be.Close(); err != nil {
			t.Errorf("closing backend: %v", err)
		}
	})
	return be
}

func TestLiveProcessBackend(t *testing.T) {
	be := liveBackend(t, 1<<30)
	d := startDaemon(t, daemonOpts{backend: be})
	c := d.client
	ctx := context.Background()
	id, err := c.CreateAgent(ctx, api.CreateAgentRequest{Files: map[string]string{"hello.txt": "hi there\n"}, Env: []string{"GREETING=hello"}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, cmd, wantOut string
		wantExit           int
	}{
		{name: "reads the seeded workspace", cmd: "cat /workspace/hello.txt", wantOut: "hi there"},
		{name: "sees the agent env", cmd: "echo $GREETING", wantOut: "hello"},
		{name: "writes the workspace", cmd: "echo result > /workspace/out.txt && ln -s /etc/passwd /workspace/pw"},
		{name: "exit code", cmd: "exit 5", wantExit: 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := c.Exec(ctx, id, api.ExecRequest{Command: tt.cmd, TimeoutS: 20})
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode != tt.wantExit || !strings.Contains(res.Stdout, tt.wantOut) {
				t.Errorf("exec %q = %+v, want exit %d and %q", tt.cmd, res, tt.wantExit, tt.wantOut)
			}
		})
	}
	if b, err := c.GetFile(ctx, id, "out.txt"); err != nil || string(b) != "result\n" {
		t.Errorf("out.txt = %q, %v", b, err)
	}
	if b, err := c.GetFile(ctx, id, "pw"); !client.IsStatus(err, 400) && !client.IsStatus(err, 404) {
		t.Errorf("symlink made in the sandbox to /etc/passwd: got %q, %v; want refused", b, err)
	}
	if err := c.DeleteAgent(ctx, id); err != nil {
		t.Fatal(err)
	}
	if n := d.srv.Status(ctx).Resident; n != 0 {
		t.Errorf("%d sandboxes resident after delete", n)
	}
}

// TestLiveImportedImage: an agent names an imported image; its actions run
// in it, the agent's record pins the image's id, and the image cannot be
// removed until the agent is deleted.
func TestLiveImportedImage(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("live api test needs root (namespaces, mounts, cgroups)")
	}
	store, im := imagetest.ImportBusybox(t, "example.test/busybox:1")
	be := liveBackend(t, 1<<30, func(c *process.Config) { c.Images = store })
	d := startDaemon(t, daemonOpts{backend: be})
	ctx := context.Background()
	if _, err := d.client.CreateAgent(ctx, api.CreateAgentRequest{Image: "example.test/busybox:2"}); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("an agent of a missing image: %v", err)
	}
	id, err := d.client.CreateAgent(ctx, api.CreateAgentRequest{Image: "example.test/busybox:1"})
	if err != nil {
		t.Fatal(err)
	}
	ag, err := d.client.GetAgent(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if ag.Image != imagestore.Pinned("example.test/busybox:1", im) {
		t.Errorf("agent image %q, want it pinned to %s", ag.Image, im.ID)
	}
	res, err := d.client.Exec(ctx, id, api.ExecRequest{Command: "cat /etc/issue; id -u; pwd"})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || res.Stdout != "image\n1000\n/srv\n" {
		t.Errorf("action in the image: exit %d stdout %q stderr %q", res.ExitCode, res.Stdout, res.Stderr)
	}
	other, err := imagestore.Open(store.Root())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, _, err := other.Remove(im.ID); !errors.Is(err, imagestore.ErrInUse) {
		t.Fatalf("removing the image of a live agent: %v", err)
	}
	if err := d.client.DeleteAgent(ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, _, err := other.Remove(im.ID); err != nil {
		t.Fatalf("removing the image after its agent: %v", err)
	}
}
