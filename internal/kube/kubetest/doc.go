// Package kubetest runs a real Kubernetes control plane for end-to-end
// tests of the node agent's control-plane side: etcd and kube-apiserver
// (RBAC on, static tokens) on loopback, agent-sandbox's controller, and a
// test kubelet for one namespace, from the binaries tools/kube/install.sh
// caches under ~/.cache/tenon/kube/<version>. Tests skip with the reason
// when they are absent (fail under TENON_KUBE=require, as in CI).
//
// It talks to the API server with its own small admin client (Admin), not
// internal/kube's, so that internal/kube's own tests can use it.
package kubetest
