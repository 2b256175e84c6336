package api_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/api"
	"github.com/tenon-dev/tenon/internal/api/client"
	"github.com/tenon-dev/tenon/internal/sandbox"
	"github.com/tenon-dev/tenon/internal/sandbox/fake"
)

// TestHostilePreciseErrors: bad requests get a 4xx naming what was wrong (issue
// 22, finding 12).
func TestHostilePreciseErrors(t *testing.T) {
	d := startDaemon(t, daemonOpts{})
	id, _ := newAgent(t, d)
	files := "/v1/agents/" + id + "/files/"
	tests := []struct {
		name, method, path, body string
		want                     int
		msg                      string
	}{
		{name: "null create body", method: "POST", path: "/v1/agents", body: "null", want: 400, msg: "must be a JSON object"},
		{name: "array create body", method: "POST", path: "/v1/agents", body: " [] ", want: 400, msg: "must be a JSON object"},
		{name: "null exec body", method: "POST", path: "/v1/agents/" + id + "/exec", body: "null", want: 400, msg: "must be a JSON object"},
		{name: "missing file", method: "GET", path: files + "nope.txt", want: 404, msg: "no such file: nope.txt"},
		{name: "over-long name", method: "PUT", path: files + strings.Repeat("n", 300), body: "x", want: 400, msg: "longer than 255 bytes"},
		{name: "over-long name get", method: "GET", path: files + strings.Repeat("n", 300), want: 400, msg: "longer than 255 bytes"},
		{name: "relative cwd", method: "POST", path: "/v1/agents/" + id + "/exec", body: `{"command":"true","cwd":"sub"}`, want: 400, msg: `"cwd" must be an absolute path`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, msg := rawRequest(t, d, tt.method, tt.path, tt.body)
			if code != tt.want || !strings.Contains(msg, tt.msg) {
				t.Errorf("%s %s = %d %q, want %d with %q", tt.method, tt.path, code, msg, tt.want, tt.msg)
			}
		})
	}
	list, err := d.client.ListAgents(context.Background())
	if err != nil || len(list) != 1 {
		t.Errorf("%d agents, %v; want only the first (a null body created one)", len(list), err)
	}
}

// TestUnsupportedImageAtExec: a backend that cannot provide an agent's
// image fails its action with 400 naming the image, not 500.
func TestUnsupportedImageAtExec(t *testing.T) {
	be := fake.New(fake.Options{Budget: 1 << 30, CreateErr: func(sp sandbox.Spec) error {
		if sp.Image != "" {
			return fmt.Errorf("image %s: %w", sp.Image, sandbox.ErrUnsupportedImage)
		}
		return nil
	}})
	t.Cleanup(func() { be.Close() })
	d := startDaemon(t, daemonOpts{backend: be})
	ctx := context.Background()
	id, err := d.client.CreateAgent(ctx, api.CreateAgentRequest{Image: "ubuntu:22.04"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = d.client.Exec(ctx, id, api.ExecRequest{Command: "true"})
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Status != 400 || !strings.Contains(ce.Message, "ubuntu:22.04") {
		t.Errorf("exec with an unsupported image = %v, want 400 naming the image", err)
	}
}

// TestSandboxSurvivesTimeoutAndCancel: a timeout, a client that hangs up
// and a relative cwd leave the sandbox in place (issue 22, finding 8).
func TestSandboxSurvivesTimeoutAndCancel(t *testing.T) {
	be := fake.New(fake.Options{Budget: 1 << 30, SandboxBytes: 16 << 20})
	t.Cleanup(func() { be.Close() })
	d := startDaemon(t, daemonOpts{backend: be})
	ctx := context.Background()
	id, _ := newAgent(t, d)
	first, err := d.client.Exec(ctx, id, api.ExecRequest{Command: "true"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := d.client.Exec(ctx, id, api.ExecRequest{Command: "sleep 10", TimeoutS: 0.1})
	if err != nil || !res.TimedOut {
		t.Fatalf("exec past its timeout = %+v, %v; want timed_out", res, err)
	}
	cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	_, err = d.client.Exec(cctx, id, api.ExecRequest{Command: "sleep 10"})
	cancel()
	if err == nil {
		t.Fatal("exec with a client that hung up succeeded")
	}
	code, msg := rawRequest(t, d, "POST", "/v1/agents/"+id+"/exec", `{"command":"true","cwd":"sub"}`)
	if code != 400 {
		t.Errorf("relative cwd = %d %q, want 400", code, msg)
	}
	waitFor(t, func() bool { st, err := d.client.Status(ctx); return err == nil && st.Running == 0 })
	last, err := d.client.Exec(ctx, id, api.ExecRequest{Command: "true"})
	if err != nil {
		t.Fatal(err)
	}
	if last.Sandbox != first.Sandbox {
		t.Errorf("sandbox %s after a timeout and a cancel, want %s kept", last.Sandbox, first.Sandbox)
	}
	if n := be.Counters().Destroyed; n != 0 {
		t.Errorf("%d sandboxes destroyed, want 0", n)
	}
}
