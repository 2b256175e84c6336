package kube

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tenon-dev/tenon/internal/kube/kubetest"
)

// writeKubeconfig writes text as dir/kubeconfig and returns its path.
func writeKubeconfig(t *testing.T, dir, text string) string {
	t.Helper()
	path := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// kubeconfigClient loads the kubeconfig at path, makes a client of it
// and patches the node's slots to n with it.
func kubeconfigClient(t *testing.T, path, node string, n int) *Client {
	t.Helper()
	cfg, err := LoadKubeconfig(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.PatchNodeSlots(context.Background(), node, n); err != nil {
		t.Fatal(err)
	}
	return c
}

// kubeconfigYAML is a kubeconfig of one context, "c", with cluster and
// user lines (YAML, indented under cluster: and user:).
func kubeconfigYAML(cluster, user string) string {
	return "apiVersion: v1\nkind: Config\ncurrent-context: c\ncontexts:\n- name: c\n  context: {cluster: k, user: u}\n" +
		"clusters:\n- name: k\n  cluster:\n" + cluster + "users:\n- name: u\n  user:\n" + user
}

func TestLoadKubeconfigErrors(t *testing.T) {
	const server = "    server: https://10.0.0.1:6443\n"
	tests := []struct {
		name, text, want string
	}{
		{"no current context", "apiVersion: v1\nkind: Config\n", "no current-context"},
		{"unknown context", "current-context: x\n", `current-context "x" is not among`},
		{"no cluster", "current-context: c\ncontexts: [{name: c, context: {cluster: k}}]\n", `no cluster "k"`},
		{"no server", kubeconfigYAML("    certificate-authority: ca.crt\n", "    token: t\n"), "has no server"},
		{"insecure", kubeconfigYAML(server+"    insecure-skip-tls-verify: true\n", "    token: t\n"), "insecure-skip-tls-verify is not supported"},
		{"proxy", kubeconfigYAML(server+"    proxy-url: http://p:3128\n", "    token: t\n"), "proxy-url is not supported"},
		{"bad base64", kubeconfigYAML(server+"    certificate-authority-data: '%%%'\n", "    token: t\n"), "not base64"},
		{"no user", strings.Replace(kubeconfigYAML(server, "    token: t\n"), "- name: u\n", "- name: v\n", 1), `no user "u"`},
		{"exec", kubeconfigYAML(server, "    exec: {command: aws, apiVersion: client.authentication.k8s.io/v1}\n"), "exec credential plugin is not supported"},
		{"auth provider", kubeconfigYAML(server, "    auth-provider: {name: oidc}\n"), "auth-provider is not supported"},
		{"basic auth", kubeconfigYAML(server, "    username: admin\n    password: x\n"), "basic authentication"},
		{"impersonation", kubeconfigYAML(server, "    token: t\n    as: someone\n"), "impersonation"},
		{"certificate without key", kubeconfigYAML(server, "    client-certificate: c.crt\n"), "needs its key"},
		{"CA twice", kubeconfigYAML(server+"    certificate-authority: ca.crt\n    certificate-authority-data: eA==\n", "    token: t\n"), "both given"},
		{"key twice", kubeconfigYAML(server, "    client-certificate: c.crt\n    client-key: k.key\n    client-key-data: eA==\n"), "both by file and as data"},
		{"not YAML", "current-context: [\n", "kubeconfig"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadKubeconfig(writeKubeconfig(t, t.TempDir(), tc.text))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one that says %q", err, tc.want)
			}
		})
	}
}

// TestLoadKubeconfigServes loads kubeconfigs of each supported form and
// patches a node's slots through a fake API server with each.
func TestLoadKubeconfigServes(t *testing.T) {
	f, files := newFakeServer(t)
	caPEM, err := os.ReadFile(files.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	server := "    server: " + f.URL + "\n"
	dir := t.TempDir()
	for name, b := range map[string][]byte{"ca.crt": caPEM, "token": []byte("file-token\n")} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name, text, auth string
	}{
		{"inline", kubeconfigYAML(server+"    certificate-authority-data: "+base64.StdEncoding.EncodeToString(caPEM)+"\n", "    token: inline-token\n"), "Bearer inline-token"},
		{"relative files", kubeconfigYAML(server+"    certificate-authority: ca.crt\n", "    tokenFile: token\n"), "Bearer file-token"},
		{"JSON", `{"apiVersion": "v1", "kind": "Config", "current-context": "c",
			"contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
			"clusters": [{"name": "k", "cluster": {"server": "` + f.URL + `", "certificate-authority": "ca.crt"}}],
			"users": [{"name": "u", "user": {"token": "json-token"}}]}`, "Bearer json-token"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			kubeconfigClient(t, writeKubeconfig(t, dir, tc.text), "n", 1)
			rs := f.requests()
			if got := rs[len(rs)-1].Auth; got != tc.auth {
				t.Errorf("Authorization %q, want %q", got, tc.auth)
			}
		})
	}
}

// TestLoadKubeconfigClientCertificate: a kubeconfig's
// client-certificate-data and client-key-data authenticate the client to
// a server that requires a client certificate.
func TestLoadKubeconfigClientCertificate(t *testing.T) {
	caFile, certFile, keyFile := kubetest.ClientCerts(t, t.TempDir(), "tenon-node")
	read := func(path string) []byte {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	cert, key := read(certFile), read(keyFile)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(read(caFile))
	var cn string
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cn = r.TLS.PeerCertificates[0].Subject.CommonName
		_, _ = w.Write([]byte("{}"))
	}))
	srv.TLS = &tls.Config{ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool}
	srv.StartTLS()
	defer srv.Close()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	b64 := base64.StdEncoding.EncodeToString
	kubeconfigClient(t, writeKubeconfig(t, t.TempDir(), kubeconfigYAML(
		"    server: "+srv.URL+"\n    certificate-authority-data: "+b64(ca)+"\n",
		"    client-certificate-data: "+b64(cert)+"\n    client-key-data: "+b64(key)+"\n")), "n", 1)
	if cn != "tenon-node" {
		t.Errorf("server saw client %q, want tenon-node", cn)
	}
}
