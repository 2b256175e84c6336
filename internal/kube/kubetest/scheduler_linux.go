package kubetest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// adminKubeconfig writes a kubeconfig file in dir for cp's admin (token
// and CA by file) and returns its path.
func adminKubeconfig(t *testing.T, dir string, cp *ControlPlane) string {
	t.Helper()
	tok, err := os.ReadFile(cp.AdminTokenFile)
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig, _ := json.Marshal(map[string]any{
		"apiVersion": "v1", "kind": "Config", "current-context": "e2e",
		"clusters": []any{map[string]any{"name": "e2e", "cluster": map[string]any{"server": cp.Server, "certificate-authority": cp.CAFile}}},
		"users":    []any{map[string]any{"name": "admin", "user": map[string]any{"token": string(tok)}}},
		"contexts": []any{map[string]any{"name": "e2e", "context": map[string]any{"cluster": "e2e", "user": "admin"}}},
	})
	path := filepath.Join(dir, "kubeconfig")
	writeFile(t, path, kubeconfig)
	return path
}

// Binary returns the path of the cached binary name in assets, or skips
// (fails under TENON_KUBE=require) when it is absent: for the binaries
// only some tests need (kube-scheduler).
func Binary(t *testing.T, assets, name string) string {
	t.Helper()
	path := filepath.Join(assets, name)
	if _, err := os.Stat(path); err != nil {
		msg := fmt.Sprintf("no %s %s in %s: run tools/kube/install.sh", name, Version, assets)
		if os.Getenv("TENON_KUBE") == "require" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return path
}

// StartScheduler runs the default scheduler, kube-scheduler (built by
// tools/kube/install.sh from the same k8s.io/kubernetes as kube-apiserver),
// against cp as the admin, without leader election, its own HTTPS on a
// free loopback port. It skips when the binary is absent.
func StartScheduler(t *testing.T, assets string, cp *ControlPlane) {
	t.Helper()
	bin := Binary(t, assets, "kube-scheduler")
	dir := t.TempDir()
	kc := adminKubeconfig(t, dir, cp)
	start(t, dir, "kube-scheduler", bin,
		"--kubeconfig="+kc, "--authentication-kubeconfig="+kc, "--authorization-kubeconfig="+kc,
		"--leader-elect=false", "--authentication-skip-lookup", "--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(freePorts(t, 1)[0]),
		"--cert-dir="+filepath.Join(dir, "certs"))
}
