package api_test

import (
	"context"
	"encoding/json"
	"errors"
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

// rawRequest sends a request over the daemon's socket and returns the
// status and the decoded error message.
func rawRequest(t *testing.T, d *daemon, method, path, body string) (int, string) {
	t.Helper()
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (netConn, error) {
		return dialUnix(ctx, d.socket)
	}}}
	req, err := http.NewRequest(method, "http://tenon"+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e api.Error
	_ = json.NewDecoder(resp.Body).Decode(&e)
	return resp.StatusCode, e.Error
}

func TestBadRequests(t *testing.T) {
	d := startDaemon(t, daemonOpts{maxBody: 4096})
	id, err := d.client.CreateAgent(context.Background(), api.CreateAgentRequest{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, method, path, body string
		want                     int
	}{
		{name: "malformed JSON", method: "POST", path: "/v1/agents", body: `{"image":`, want: 400},
		{name: "unknown field", method: "POST", path: "/v1/agents", body: `{"imgae":"x"}`, want: 400},
		{name: "trailing data", method: "POST", path: "/v1/agents", body: `{} {}`, want: 400},
		{name: "bad env", method: "POST", path: "/v1/agents", body: `{"env":["NOEQUALS"]}`, want: 400},
		{name: "seed path escapes", method: "POST", path: "/v1/agents", body: `{"files":{"../x":"y"}}`, want: 400},
		{name: "oversized body", method: "POST", path: "/v1/agents/" + id + "/exec", body: `{"command":"` + strings.Repeat("a", 8192) + `"}`, want: 413},
		{name: "empty command", method: "POST", path: "/v1/agents/" + id + "/exec", body: `{"command":""}`, want: 400},
		{name: "negative timeout", method: "POST", path: "/v1/agents/" + id + "/exec", body: `{"command":"true","timeout_s":-1}`, want: 400},
		{name: "wrong type", method: "POST", path: "/v1/agents/" + id + "/exec", body: `{"command":5}`, want: 400},
		{name: "empty body", method: "POST", path: "/v1/agents/" + id + "/exec", body: ``, want: 400},
		{name: "bad wait state", method: "POST", path: "/v1/agents/" + id + "/wait", body: `{"state":"maybe"}`, want: 400},
		{name: "malformed id", method: "GET", path: "/v1/agents/nope", want: 404},
		{name: "unknown id", method: "GET", path: "/v1/agents/ag-000000000000", want: 404},
		{name: "exec unknown id", method: "POST", path: "/v1/agents/ag-000000000000/exec", body: `{"command":"true"}`, want: 404},
		{name: "unknown backend", method: "POST", path: "/v1/agents", body: `{"backend":"firecracker"}`, want: 400},
		{name: "proxy without upstream", method: "POST", path: "/v1/agents/" + id + "/openai/v1/chat/completions", body: `{}`, want: 501},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, msg := rawRequest(t, d, tt.method, tt.path, tt.body)
			if code != tt.want {
				t.Errorf("status %d (%q), want %d", code, msg, tt.want)
			}
			if msg == "" {
				t.Error("no JSON error message")
			}
		})
	}
}

func TestPathTraversalRefused(t *testing.T) {
	d := startDaemon(t, daemonOpts{})
	c := d.client
	ctx := context.Background()
	id, err := c.CreateAgent(ctx, api.CreateAgentRequest{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := c.GetAgent(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret")
	if err := os.WriteFile(secret, []byte("s3cret"), 0o600); err != nil {
		t.Fatal(err)
	}
	// What a command in the sandbox could leave behind: links out of the workspace.
	if err := os.Symlink(outside, filepath.Join(a.Workspace, "dirlink")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(a.Workspace, "filelink")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../..", filepath.Join(a.Workspace, "uplink")); err != nil {
		t.Fatal(err)
	}
	paths := []struct{ name, path string }{
		{name: "dot-dot", path: "../secret"},
		{name: "nested dot-dot", path: "a/../../secret"},
		{name: "absolute", path: secret},
		{name: "symlinked dir", path: "dirlink/secret"},
		{name: "symlinked file", path: "filelink"},
		{name: "relative link up", path: "uplink/etc/passwd"},
		{name: "empty", path: ""},
	}
	for _, tt := range paths {
		t.Run("get "+tt.name, func(t *testing.T) {
			b, err := c.GetFile(ctx, id, tt.path)
			if err == nil || !client.IsStatus(err, 400) && !client.IsStatus(err, 404) {
				t.Errorf("GetFile(%q) = %q, %v; want 400 or 404", tt.path, b, err)
			}
		})
		t.Run("put "+tt.name, func(t *testing.T) {
			err := c.PutFile(ctx, id, tt.path, []byte("pwned"))
			if err == nil || !client.IsStatus(err, 400) && !client.IsStatus(err, 404) {
				t.Errorf("PutFile(%q) = %v; want 400 or 404", tt.path, err)
			}
		})
	}
	if b, _ := os.ReadFile(secret); string(b) != "s3cret" {
		t.Errorf("file outside the workspace changed: %q", b)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 1 {
		t.Errorf("files appeared outside the workspace: %v", ents)
	}
}

func TestTCPNeedsToken(t *testing.T) {
	d := startDaemon(t, daemonOpts{token: "sekrit"})
	ln := listenTCP(t)
	go d.srv.Serve(ln)
	ctx := context.Background()
	tests := []struct {
		name  string
		token string
		want  int // 0 = success
	}{
		{name: "no token", token: "", want: 401},
		{name: "wrong token", token: "guess", want: 401},
		{name: "right token", token: "sekrit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := client.NewTCP(ln.Addr().String(), tt.token)
			defer c.Close()
			_, err := c.Status(ctx)
			if tt.want == 0 && err != nil || tt.want != 0 && !client.IsStatus(err, tt.want) {
				t.Errorf("status: %v, want %d", err, tt.want)
			}
		})
	}
	// The unix socket needs no token.
	if _, err := d.client.Status(ctx); err != nil {
		t.Errorf("unix socket: %v", err)
	}
}

func TestTCPRefusedWithoutToken(t *testing.T) {
	d := startDaemon(t, daemonOpts{})
	ln := listenTCP(t)
	defer ln.Close()
	if err := d.srv.Serve(ln); !errors.Is(err, api.ErrNoToken) {
		t.Errorf("Serve(tcp) without token = %v, want ErrNoToken", err)
	}
}

func TestRestartRecoversAgents(t *testing.T) {
	state := t.TempDir()
	d := startDaemon(t, daemonOpts{state: state})
	ctx := context.Background()
	var ids []string
	for i := range 3 {
		id, err := d.client.CreateAgent(ctx, api.CreateAgentRequest{Files: map[string]string{"n.txt": string(rune('a' + i))}, Env: []string{"K=V"}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.client.Exec(ctx, id, api.ExecRequest{Command: "true"}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := d.stop(); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	d2 := startDaemon(t, daemonOpts{state: state})
	list, err := d2.client.ListAgents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != len(ids) {
		t.Fatalf("recovered %d agents, want %d", len(list), len(ids))
	}
	for i, id := range ids {
		a, err := d2.client.GetAgent(ctx, id)
		if err != nil {
			t.Fatalf("agent %s lost: %v", id, err)
		}
		if a.Sandbox != "" || len(a.Env) != 1 {
			t.Errorf("recovered agent = %+v, want absent sandbox and its env", a)
		}
		b, err := d2.client.GetFile(ctx, id, "n.txt")
		if err != nil || string(b) != string(rune('a'+i)) {
			t.Errorf("workspace file = %q, %v", b, err)
		}
		res, err := d2.client.Exec(ctx, id, api.ExecRequest{Command: "exit 7"})
		if err != nil || res.ExitCode != 7 || res.Sandbox == "" {
			t.Errorf("exec after restart = %+v, %v", res, err)
		}
	}
}

func TestShutdownDrainsRunningActions(t *testing.T) {
	d := startDaemon(t, daemonOpts{})
	ctx := context.Background()
	id, err := d.client.CreateAgent(ctx, api.CreateAgentRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var res api.ExecResponse
	var execErr error
	wg.Go(func() { res, execErr = d.client.Exec(ctx, id, api.ExecRequest{Command: "sleep 0.3"}) })
	waitFor(t, func() bool { st, err := d.client.Status(ctx); return err == nil && st.Running == 1 })
	t0 := time.Now()
	if err := d.stop(); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	wg.Wait()
	if execErr != nil || res.ExitCode != 0 {
		t.Errorf("running action = %+v, %v; want it to finish", res, execErr)
	}
	if el := time.Since(t0); el < 100*time.Millisecond {
		t.Errorf("shutdown took %v: it did not wait for the action", el)
	}
}

func TestShutdownRefusesQueuedActions(t *testing.T) {
	d := startDaemon(t, daemonOpts{policy: "static-1"})
	ctx := context.Background()
	first, err := d.client.CreateAgent(ctx, api.CreateAgentRequest{})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { a, err := d.client.GetAgent(ctx, first); return err == nil && a.State != api.StateQueued })
	second, err := d.client.CreateAgent(ctx, api.CreateAgentRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var queuedErr error
	wg.Go(func() { _, queuedErr = d.client.Exec(ctx, second, api.ExecRequest{Command: "true"}) })
	waitFor(t, func() bool { st, err := d.client.Status(ctx); return err == nil && st.QueuedActions == 1 })
	t0 := time.Now()
	if err := d.stop(); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	wg.Wait()
	if !client.IsStatus(queuedErr, http.StatusServiceUnavailable) {
		t.Errorf("queued action during shutdown: %v, want 503", queuedErr)
	}
	if el := time.Since(t0); el > 2*time.Second {
		t.Errorf("shutdown took %v with only a queued action", el)
	}
}
