package main

import (
	"testing"

	"github.com/tenon-dev/tenon/internal/kube"
)

func TestKubeConfig(t *testing.T) {
	tests := []struct {
		name      string
		inCluster bool
		explicit  kube.Config
		want      string // the server, "" for none
		err       bool
	}{
		{name: "none", want: ""},
		{name: "explicit", explicit: kube.Config{Server: "https://10.0.0.1:6443", TokenFile: "t"}, want: "https://10.0.0.1:6443"},
		{name: "both", inCluster: true, explicit: kube.Config{Server: "https://x"}, err: true},
		{name: "a token without a server", explicit: kube.Config{TokenFile: "t"}, err: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := kubeConfig(tc.inCluster, tc.explicit)
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
