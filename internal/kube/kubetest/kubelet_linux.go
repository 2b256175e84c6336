package kubetest

import (
	"context"
	"net/http"
	"path/filepath"
	"testing"
	"time"
)

// StartSandboxController runs agent-sandbox's controller (v0.5.6, built by
// tools/kube/install.sh) against cp as the admin, without its webhooks and
// leader election.
func StartSandboxController(t *testing.T, assets string, cp *ControlPlane) {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("KUBECONFIG", adminKubeconfig(t, dir, cp))
	start(t, dir, "agent-sandbox-controller", filepath.Join(assets, "agent-sandbox-controller"),
		"--enable-webhook=false", "--manage-webhook-certs=false", "--leader-elect=false",
		"--metrics-bind-address=0", "--health-probe-bind-address=0")
}

// Pod is the part of a pod the test kubelet reads.
type Pod struct {
	Metadata struct {
		Name              string            `json:"name"`
		Namespace         string            `json:"namespace"`
		UID               string            `json:"uid"`
		Annotations       map[string]string `json:"annotations"`
		DeletionTimestamp *string           `json:"deletionTimestamp"`
	} `json:"metadata"`
	Status struct {
		Phase string `json:"phase"`
	} `json:"status"`
}

// Kubelet plays the kubelet of the test's node for the pods of Namespace:
// it reports a pod bound to the node Running and Ready (after Run, when
// set, ran its containers), and completes a pod's graceful deletion
// (after Stop, when set, stopped them: the kubelet's last step). Without
// Run and Stop no container runs and pods come and go at once.
type Kubelet struct {
	Namespace string
	// Run runs a new pod's containers; an error is logged and retried at
	// the next poll.
	Run func(ctx context.Context, p *Pod) error
	// Stop stops a deleted pod's containers.
	Stop func(ctx context.Context, p *Pod) error
}

// Serve plays the kubelet until ctx ends, polling the pods every 5 ms.
func (k Kubelet) Serve(ctx context.Context, t *testing.T, a *Admin) {
	running := map[string]any{"status": map[string]any{
		"phase": "Running", "podIP": "10.1.0.5", "podIPs": []map[string]string{{"ip": "10.1.0.5"}},
		"conditions": []map[string]string{{"type": "Ready", "status": "True"}},
	}}
	hook := func(f func(context.Context, *Pod) error, p *Pod) error {
		if f == nil {
			return nil
		}
		return f(ctx, p)
	}
	for ctx.Err() == nil {
		var list struct{ Items []Pod }
		if err := a.Do(ctx, http.MethodGet, "/api/v1/namespaces/"+k.Namespace+"/pods", "", nil, &list); err != nil && ctx.Err() == nil {
			t.Logf("test kubelet: listing pods: %v", err)
		}
		for i := range list.Items {
			p := &list.Items[i]
			path := "/api/v1/namespaces/" + k.Namespace + "/pods/" + p.Metadata.Name
			var err error
			switch {
			case p.Metadata.DeletionTimestamp != nil:
				if err = hook(k.Stop, p); err == nil {
					err = a.Do(ctx, http.MethodDelete, path+"?gracePeriodSeconds=0", "", nil, nil)
				}
			case p.Status.Phase != "Running":
				if err = hook(k.Run, p); err == nil {
					err = a.patch(ctx, path+"/status", running)
				}
			}
			if err != nil && ctx.Err() == nil {
				t.Logf("test kubelet: %s: %v", p.Metadata.Name, err)
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(5 * time.Millisecond):
		}
	}
}
