package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tenon-dev/tenon/internal/kube"
)

func TestKubeConfig(t *testing.T) {
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kc, []byte(`apiVersion: v1
kind: Config
current-context: c
contexts: [{name: c, context: {cluster: k, user: u}}]
clusters: [{name: k, cluster: {server: "https://10.0.0.2:6443"}}]
users: [{name: u, user: {token: abc}}]
`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		inCluster  bool
		kubeconfig string
		explicit   kube.Config
		want       string // the server, "" for none
		err        bool
	}{
		{name: "none", want: ""},
		{name: "explicit", explicit: kube.Config{Server: "https://10.0.0.1:6443", TokenFile: "t"}, want: "https://10.0.0.1:6443"},
		{name: "both", inCluster: true, explicit: kube.Config{Server: "https://x"}, err: true},
		{name: "a token without a server", explicit: kube.Config{TokenFile: "t"}, err: true},
		{name: "kubeconfig", kubeconfig: kc, want: "https://10.0.0.2:6443"},
		{name: "kubeconfig and server", kubeconfig: kc, explicit: kube.Config{Server: "https://x"}, err: true},
		{name: "kubeconfig and in-cluster", kubeconfig: kc, inCluster: true, err: true},
		{name: "kubeconfig missing", kubeconfig: filepath.Join(t.TempDir(), "none"), err: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := kubeConfig(tc.inCluster, tc.kubeconfig, tc.explicit)
			if (err != nil) != tc.err {
				t.Fatalf("err = %v, want error %v", err, tc.err)
			}
			got := ""
			if c != nil {
				got = c.Server
			}
			if got != tc.want {
				t.Errorf("server = %q, want %q", got, tc.want)
			}
		})
	}
}
