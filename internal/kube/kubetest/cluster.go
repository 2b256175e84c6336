package kubetest

import (
	"path/filepath"
	"testing"
	"time"
)

// SetUp creates the test's cluster objects as the admin: the Node node,
// the namespaces, agent-sandbox's Sandbox CRD (from assets) and the node
// agent's RBAC (rbacDir's clusterrole.yaml and clusterrolebinding.yaml,
// binding NodeUser), and waits until Sandboxes are served.
func SetUp(t *testing.T, a *Admin, assets, rbacDir, node string, namespaces ...string) {
	t.Helper()
	a.CreateJSON("/api/v1/nodes", map[string]any{"metadata": map[string]any{"name": node}})
	for _, ns := range namespaces {
		a.CreateJSON("/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": ns}})
	}
	a.CreateFile("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", filepath.Join(assets, "crds", SandboxCRD))
	a.CreateFile("/apis/rbac.authorization.k8s.io/v1/clusterroles", filepath.Join(rbacDir, "clusterrole.yaml"))
	a.CreateFile("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", filepath.Join(rbacDir, "clusterrolebinding.yaml"))
	WaitFor(t, "the Sandbox CRD served", time.Minute, func() bool {
		return a.Get("/apis/agents.x-k8s.io/v1beta1/sandboxes", &struct{}{}) == nil
	})
}

// CreateSandbox creates the agent-sandbox Sandbox namespace/name, with
// annotations, whose pod (with podAnnotations) runs one container "agent"
// of image on node: the pod template names the node, as no scheduler runs.
func (a *Admin) CreateSandbox(namespace, name, node, image string, annotations, podAnnotations map[string]string) {
	a.T.Helper()
	a.CreateJSON("/apis/agents.x-k8s.io/v1beta1/namespaces/"+namespace+"/sandboxes", map[string]any{
		"apiVersion": "agents.x-k8s.io/v1beta1", "kind": "Sandbox",
		"metadata": map[string]any{"name": name, "annotations": annotations},
		"spec": map[string]any{"podTemplate": map[string]any{
			"metadata": map[string]any{"annotations": podAnnotations},
			"spec": map[string]any{"nodeName": node,
				"containers": []map[string]any{{"name": "agent", "image": image}}}}},
	})
}
