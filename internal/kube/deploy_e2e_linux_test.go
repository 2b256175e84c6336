package kube

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/tenon-dev/tenon/internal/kube/kubetest"
)

// deployDir is the node agent's deployment (kustomization, DaemonSet,
// RBAC), from this package's directory.
const deployDir = "../../deploy/node"

// kustomizeObjects returns the objects of the kustomization in dir, in
// order: it reads the files its resources list, and fails on any other
// kustomization field (a patch, a name prefix, a generator), which it
// would not apply as kustomize does.
func kustomizeObjects(t *testing.T, dir string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		APIVersion string `yaml:"apiVersion"`
		Kind       string
		Resources  []string
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&k); err != nil {
		t.Fatalf("kustomization.yaml: %v (this test reads apiVersion, kind and resources only: extend it for more)", err)
	}
	if k.Kind != "Kustomization" || len(k.Resources) == 0 {
		t.Fatalf("kustomization.yaml: kind %q with %d resources", k.Kind, len(k.Resources))
	}
	var objs []map[string]any
	for _, res := range k.Resources {
		b, err := os.ReadFile(filepath.Join(dir, res))
		if err != nil {
			t.Fatalf("kustomization.yaml's resource %s: %v", res, err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(b))
		for {
			var obj map[string]any
			if err := dec.Decode(&obj); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", res, err)
			}
			if obj != nil {
				objs = append(objs, obj)
			}
		}
	}
	return objs
}

// apiResource is where the API server serves a kind (discovery).
type apiResource struct {
	name       string
	namespaced bool
}

// discover returns the resource serving apiVersion/kind, from the API
// server's discovery documents.
func discover(t *testing.T, a *kubetest.Admin, apiVersion, kind string) apiResource {
	t.Helper()
	path := "/apis/" + apiVersion
	if !strings.Contains(apiVersion, "/") {
		path = "/api/" + apiVersion
	}
	var list struct {
		Resources []struct {
			Name, Kind string
			Namespaced bool
		}
	}
	if err := a.Get(path, &list); err != nil {
		t.Fatalf("%s %s: the API server does not serve %s: %v", apiVersion, kind, apiVersion, err)
	}
	for _, r := range list.Resources {
		if r.Kind == kind && !strings.Contains(r.Name, "/") {
			return apiResource{r.Name, r.Namespaced}
		}
	}
	t.Fatalf("the API server serves no kind %s in %s", kind, apiVersion)
	return apiResource{}
}

// TestDeployManifestsE2E builds deploy/node's kustomization (the files it
// lists) and applies every object to a real kube-apiserver with
// server-side apply and dryRun=All: the API server's validation and
// admission accept each. Namespaces are then created for real, so that
// the objects in them are admitted.
func TestDeployManifestsE2E(t *testing.T) {
	objs := kustomizeObjects(t, deployDir)
	assets := kubetest.Assets(t)
	cp := kubetest.StartControlPlane(t, assets)
	adm := kubetest.NewAdmin(t, cp)
	kinds := map[string]int{}
	apply := func(obj map[string]any, dryRun bool) error {
		apiVersion, _ := obj["apiVersion"].(string)
		kind, _ := obj["kind"].(string)
		meta, _ := obj["metadata"].(map[string]any)
		name, _ := meta["name"].(string)
		ns, _ := meta["namespace"].(string)
		r := discover(t, adm, apiVersion, kind)
		path := "/apis/" + apiVersion
		if !strings.Contains(apiVersion, "/") {
			path = "/api/" + apiVersion
		}
		switch {
		case r.namespaced && ns == "":
			t.Errorf("%s %s: no namespace (kubectl apply would put it into the current context's)", kind, name)
			return nil
		case r.namespaced:
			path += "/namespaces/" + ns
		case ns != "":
			t.Errorf("%s %s: cluster-scoped, but names namespace %s", kind, name, ns)
		}
		path += "/" + r.name + "/" + name + "?fieldManager=tenon-deploy-test&fieldValidation=Strict"
		if dryRun {
			path += "&dryRun=All"
		}
		b, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		return adm.Do(context.Background(), http.MethodPatch, path, "application/apply-patch+yaml", b, nil)
	}
	for _, obj := range objs {
		kind, _ := obj["kind"].(string)
		if err := apply(obj, true); err != nil {
			t.Errorf("the API server rejects %s: %v", kind, err)
			continue
		}
		kinds[kind]++
		if kind == "Namespace" {
			if err := apply(obj, false); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, kind := range []string{"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "DaemonSet"} {
		if kinds[kind] == 0 {
			t.Errorf("no %s accepted from %s (accepted: %v)", kind, deployDir, kinds)
		}
	}
	t.Logf("accepted with server-side dry-run: %v", kinds)
}
