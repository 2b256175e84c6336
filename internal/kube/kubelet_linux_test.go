package kube

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// startSandboxController runs agent-sandbox's controller (v0.5.6, built by
// tools/kube/install.sh) against cp as the admin, without its webhooks and
// leader election.
func startSandboxController(t *testing.T, assets string, cp *controlPlane) {
	t.Helper()
	dir := t.TempDir()
	tok, err := os.ReadFile(cp.Admin.TokenFile)
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
	t.Setenv("KUBECONFIG", path)
	start(t, dir, "agent-sandbox-controller", filepath.Join(assets, "agent-sandbox-controller"),
		"--enable-webhook=false", "--manage-webhook-certs=false", "--leader-elect=false",
		"--metrics-bind-address=0", "--health-probe-bind-address=0")
}

// fakeKubelet plays the kubelet of the test's node for the pods in
// namespace, until ctx ends: it reports a pod bound to the node Running and
// Ready at once (no container runs), and completes a pod's graceful
// deletion at once (the kubelet's last step, after its containers stop).
func fakeKubelet(ctx context.Context, t *testing.T, c *Client, namespace string) {
	type pod struct {
		Metadata struct {
			Name              string  `json:"name"`
			DeletionTimestamp *string `json:"deletionTimestamp"`
		} `json:"metadata"`
		Status struct {
			Phase string `json:"phase"`
		} `json:"status"`
	}
	running := map[string]any{"status": map[string]any{
		"phase": "Running", "podIP": "10.1.0.5", "podIPs": []map[string]string{{"ip": "10.1.0.5"}},
		"conditions": []map[string]string{{"type": "Ready", "status": "True"}},
	}}
	for ctx.Err() == nil {
		var list struct{ Items []pod }
		if err := c.get(ctx, "/api/v1/namespaces/"+namespace+"/pods", &list); err != nil {
			if ctx.Err() == nil {
				t.Logf("fake kubelet: listing pods: %v", err)
			}
		}
		for _, p := range list.Items {
			path := "/api/v1/namespaces/" + namespace + "/pods/" + p.Metadata.Name
			var err error
			switch {
			case p.Metadata.DeletionTimestamp != nil:
				err = c.do(ctx, http.MethodDelete, path+"?gracePeriodSeconds=0", "", nil, nil)
			case p.Status.Phase != "Running":
				err = c.patch(ctx, path+"/status", running, nil)
			}
			if err != nil && ctx.Err() == nil {
				t.Logf("fake kubelet: %s: %v", p.Metadata.Name, err)
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(5 * time.Millisecond):
		}
	}
}
