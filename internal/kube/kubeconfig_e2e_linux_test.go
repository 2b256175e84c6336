package kube

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/tenon-dev/tenon/internal/kube/kubetest"
)

// TestKubeconfigE2E reaches a real kube-apiserver as the node agent
// through kubeconfig files the test writes, in the forms tenon node
// --kubeconfig reads: a token and the CA inline, and a client certificate,
// key and CA by relative file names. Each patches the node's slots (its
// RBAC allows nodes/status only) and the admin reads them back.
func TestKubeconfigE2E(t *testing.T) {
	assets := kubetest.Assets(t)
	cp := kubetest.StartControlPlane(t, assets)
	adm := kubetest.NewAdmin(t, cp)
	kubetest.SetUp(t, adm, assets, "testdata", e2eNode, "agents")
	read := func(path string) []byte {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	dir := t.TempDir()
	for name, src := range map[string]string{"ca.crt": cp.CAFile, "node.crt": cp.NodeCertFile, "node.key": cp.NodeKeyFile} {
		if err := os.WriteFile(filepath.Join(dir, name), read(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	server := "    server: " + cp.Server + "\n"
	tests := []struct {
		name, text string
	}{
		{"token and CA inline", kubeconfigYAML(server+"    certificate-authority-data: "+base64.StdEncoding.EncodeToString(read(cp.CAFile))+"\n",
			"    token: "+string(read(cp.NodeTokenFile))+"\n")},
		{"client certificate by relative files", kubeconfigYAML(server+"    certificate-authority: ca.crt\n",
			"    client-certificate: node.crt\n    client-key: node.key\n")},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := 10 + i
			c := kubeconfigClient(t, writeKubeconfig(t, dir, tc.text), e2eNode, want)
			var n struct {
				Status struct{ Allocatable map[string]string }
			}
			if err := adm.Get("/api/v1/nodes/"+e2eNode, &n); err != nil {
				t.Fatal(err)
			}
			if got := n.Status.Allocatable[SlotsResource]; got != strconv.Itoa(want) {
				t.Errorf("node's %s = %q, want %d", SlotsResource, got, want)
			}
			// It is the node agent (RBAC: nodes/status only), not the admin.
			var se *StatusError
			err := c.patch(context.Background(), "/api/v1/nodes/"+e2eNode, map[string]any{"metadata": map[string]any{"labels": map[string]string{"x": "y"}}}, nil)
			if !errors.As(err, &se) || se.Code != http.StatusForbidden {
				t.Errorf("patching the node object: %v, want 403 for user %s", err, kubetest.NodeUser)
			}
		})
	}
}
