package kubetest

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// Admin is a client of the API server with the cluster admin's token (the
// operators, agent-sandbox's controller and the kubelet of the tests).
type Admin struct {
	T      *testing.T
	Server string
	token  string
	http   *http.Client
}

// NewAdmin returns an admin client of cp.
func NewAdmin(t *testing.T, cp *ControlPlane) *Admin {
	t.Helper()
	pem, err := os.ReadFile(cp.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	tok, err := os.ReadFile(cp.AdminTokenFile)
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
	return &Admin{T: t, Server: cp.Server, token: strings.TrimSpace(string(tok)), http: &http.Client{Transport: tr, Timeout: 30 * time.Second}}
}

// Do sends a request with body (JSON unless ctype says otherwise) and
// decodes a 2xx answer into out (nil: discarded); any other status is an
// error with the server's message.
func (a *Admin) Do(ctx context.Context, method, path, ctype string, body []byte, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, a.Server+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	req.Header.Set("Accept", "application/json")
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := a.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %s: %.300s", method, path, resp.Status, b)
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

// Get decodes the object at path into out.
func (a *Admin) Get(path string, out any) error {
	return a.Do(context.Background(), http.MethodGet, path, "", nil, out)
}

// Create posts body (of content type ctype) to path, failing the test on
// an error.
func (a *Admin) Create(path string, body []byte, ctype string) {
	a.T.Helper()
	if err := a.Do(context.Background(), http.MethodPost, path, ctype, body, nil); err != nil {
		a.T.Fatalf("creating %s: %v", path, err)
	}
}

// CreateFile posts the YAML or JSON file to path.
func (a *Admin) CreateFile(path, file string) {
	a.T.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		a.T.Fatal(err)
	}
	a.Create(path, b, "application/yaml")
}

// CreateJSON posts obj as JSON to path.
func (a *Admin) CreateJSON(path string, obj any) {
	a.T.Helper()
	b, _ := json.Marshal(obj)
	a.Create(path, b, "application/json")
}

// Patch applies a JSON merge patch to the object at path.
func (a *Admin) Patch(path string, body any) {
	a.T.Helper()
	if err := a.patch(context.Background(), path, body); err != nil {
		a.T.Fatalf("patching %s: %v", path, err)
	}
}

func (a *Admin) patch(ctx context.Context, path string, body any) error {
	b, _ := json.Marshal(body)
	return a.Do(ctx, http.MethodPatch, path, "application/merge-patch+json", b, nil)
}

// WaitFor polls cond every 2 ms for up to d and returns how long it took.
func WaitFor(t *testing.T, what string, d time.Duration, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > d {
			t.Fatalf("%s: not within %v", what, d)
		}
		time.Sleep(2 * time.Millisecond)
	}
	return time.Since(start)
}
