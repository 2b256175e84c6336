// Package kubetest runs a real Kubernetes control plane for end-to-end
// tests of the node agent's control-plane side: etcd and kube-apiserver
// (RBAC on, static tokens and client certificates) on loopback,
// agent-sandbox's controller, the default scheduler (kube-scheduler), a
// real kubelet kept from changing the shared host (StartKubelet), and a
// test kubelet for one namespace (Kubelet), from the binaries
// tools/kube/install.sh caches under ~/.cache/tenon/kube/<version>. Tests
// skip with the reason when they are absent (fail under TENON_KUBE=require,
// as in CI).
//
// It talks to the API server with its own small admin client (Admin), not
// internal/kube's, so that internal/kube's own tests can use it.
package kubetest
