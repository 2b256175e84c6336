package kube

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// request is one request the fake API server saw.
type request struct {
	Method, Path, ContentType, Auth string
	Body                            map[string]any
}

// fakeServer is a TLS API server that records requests and answers with
// reply (200 {} when nil).
type fakeServer struct {
	*httptest.Server
	mu    sync.Mutex
	reqs  []request
	reply func(w http.ResponseWriter, r *http.Request) bool
}

func newFakeServer(t *testing.T) (*fakeServer, Config) {
	t.Helper()
	f := &fakeServer{}
	f.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rq := request{Method: r.Method, Path: r.URL.Path, ContentType: r.Header.Get("Content-Type"), Auth: r.Header.Get("Authorization")}
		if b, _ := io.ReadAll(r.Body); len(b) > 0 {
			_ = json.Unmarshal(b, &rq.Body)
		}
		f.mu.Lock()
		f.reqs = append(f.reqs, rq)
		reply := f.reply
		f.mu.Unlock()
		if reply != nil && reply(w, r) {
			return
		}
		_, _ = io.WriteString(w, "{}")
	}))
	t.Cleanup(f.Close)
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.crt")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: f.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	tok := filepath.Join(dir, "token")
	if err := os.WriteFile(tok, []byte("secret-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return f, Config{Server: f.URL, TokenFile: tok, CAFile: ca}
}

func (f *fakeServer) requests() []request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]request(nil), f.reqs...)
}

func TestPatchNodeSlots(t *testing.T) {
	f, cfg := newFakeServer(t)
	c, err := NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.PatchNodeSlots(context.Background(), "node-1", 7); err != nil {
		t.Fatal(err)
	}
	rs := f.requests()
	if len(rs) != 1 {
		t.Fatalf("%d requests", len(rs))
	}
	r := rs[0]
	if r.Method != http.MethodPatch || r.Path != "/api/v1/nodes/node-1/status" || r.ContentType != mergePatch || r.Auth != "Bearer secret-token" {
		t.Errorf("request %+v", r)
	}
	b, _ := json.Marshal(r.Body)
	want := `{"status":{"allocatable":{"tenon.dev/agent-slots":"7"},"capacity":{"tenon.dev/agent-slots":"7"}}}`
	if string(b) != want {
		t.Errorf("body %s, want %s", b, want)
	}
}

func TestSetSandboxModeAndErrors(t *testing.T) {
	f, cfg := newFakeServer(t)
	c, err := NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ref := SandboxRef{Namespace: "agents", Name: "a-1"}
	if err := c.SetSandboxMode(context.Background(), ref, ModeSuspended); err != nil {
		t.Fatal(err)
	}
	r := f.requests()[0]
	b, _ := json.Marshal(r.Body)
	if r.Path != "/apis/agents.x-k8s.io/v1beta1/namespaces/agents/sandboxes/a-1" || string(b) != `{"spec":{"operatingMode":"Suspended"}}` {
		t.Errorf("request %s %s", r.Path, b)
	}
	f.mu.Lock()
	f.reply = func(w http.ResponseWriter, _ *http.Request) bool {
		w.WriteHeader(http.StatusForbidden)
		_, _ = io.WriteString(w, `{"kind":"Status","reason":"Forbidden","message":"sandboxes is forbidden"}`)
		return true
	}
	f.mu.Unlock()
	err = c.SetSandboxMode(context.Background(), ref, ModeRunning)
	var se *StatusError
	if !errors.As(err, &se) || se.Code != 403 || !strings.Contains(err.Error(), "RBAC") {
		t.Errorf("forbidden patch: %v", err)
	}
}

func TestClientRejectsAnUntrustedServer(t *testing.T) {
	_, cfg := newFakeServer(t)
	cfg.CAFile = ""
	c, err := NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.PatchNodeSlots(context.Background(), "n", 1); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("patch to a server signed by no trusted CA: %v", err)
	}
	if _, err := NewClient(Config{Server: "localhost:6443"}); err == nil {
		t.Error("a server without a scheme was accepted")
	}
}

func TestInCluster(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1")
	t.Setenv("KUBERNETES_SERVICE_PORT", "443")
	if _, err := InCluster(dir); !errors.Is(err, ErrNotInCluster) {
		t.Errorf("no token: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "token"), []byte("t"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := InCluster(dir)
	if err != nil || cfg.Server != "https://10.96.0.1:443" || cfg.CAFile != filepath.Join(dir, "ca.crt") {
		t.Errorf("InCluster = %+v, %v", cfg, err)
	}
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	if _, err := InCluster(dir); !errors.Is(err, ErrNotInCluster) {
		t.Errorf("no host: %v", err)
	}
}
