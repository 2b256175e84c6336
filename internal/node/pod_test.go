package node

import "testing"

func TestIsAgent(t *testing.T) {
	tests := []struct {
		name string
		ann  map[string]string
		want bool
	}{
		{name: "true", ann: map[string]string{AnnotationAgent: "true"}, want: true},
		{name: "True with spaces", ann: map[string]string{AnnotationAgent: " True "}, want: true},
		{name: "false", ann: map[string]string{AnnotationAgent: "false"}},
		{name: "absent", ann: map[string]string{"other": "true"}},
		{name: "nil", ann: nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := IsAgent(tc.ann); got != tc.want {
				t.Errorf("IsAgent(%v) = %v, want %v", tc.ann, got, tc.want)
			}
		})
	}
}

func TestCgroupsPath(t *testing.T) {
	if got := CgroupsPath("/tenon-node/", "abc"); got != "/tenon-node/abc" {
		t.Errorf("CgroupsPath = %q", got)
	}
	tests := []struct {
		name, path, want string
		ok               bool
	}{
		{name: "adopted", path: "/tenon-node/abc", want: "tenon-node/abc", ok: true},
		{name: "kubelet's", path: "/kubepods/burstable/pod1/abc"},
		{name: "prefix of another name", path: "/tenon-node2/abc"},
		{name: "systemd driver", path: "kubepods.slice:cri-containerd:abc"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := underDomain("tenon-node", tc.path)
			if got != tc.want || ok != tc.ok {
				t.Errorf("underDomain(%q) = %q, %v; want %q, %v", tc.path, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestClassifyOOM(t *testing.T) {
	tests := []struct {
		name       string
		ctr        Counters
		domainHits int64
		want       Cause
	}{
		{name: "own limit", ctr: Counters{Kills: 1, LimitHits: 3}, want: CauseContainerLimit},
		{name: "own limit while the domain is full too", ctr: Counters{Kills: 1, LimitHits: 1}, domainHits: 5, want: CauseContainerLimit},
		{name: "domain full", ctr: Counters{Kills: 1}, domainHits: 40, want: CauseNodeBudget},
		{name: "neither", ctr: Counters{Kills: 1}, want: CauseHost},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ClassifyOOM(tc.ctr, tc.domainHits); got != tc.want {
				t.Errorf("ClassifyOOM = %s, want %s", got, tc.want)
			}
		})
	}
}
