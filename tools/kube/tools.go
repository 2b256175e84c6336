//go:build tools

// Package kube pins the Kubernetes control-plane build that tenon's
// end-to-end tests of internal/kube run against. It is its own module so
// that tenon's go.mod never gains k8s.io/kubernetes; install.sh builds
// kube-apiserver, kube-scheduler and kubelet from it into
// ~/.cache/tenon/kube/<version>.
package kube

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver/app"
	_ "k8s.io/kubernetes/cmd/kube-scheduler/app"
	_ "k8s.io/kubernetes/cmd/kubelet/app"
)
