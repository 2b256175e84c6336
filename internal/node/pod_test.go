package node

import (
	"testing"
	"time"
)

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
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	tests := []struct {
		name           string
		ctrHit, domHit time.Time
		want           Cause
	}{
		{name: "own limit", ctrHit: ago(time.Second), want: CauseContainerLimit},
		{name: "own limit after the domain's", ctrHit: ago(time.Second), domHit: ago(5 * time.Second), want: CauseContainerLimit},
		{name: "domain after the own limit", ctrHit: ago(20 * time.Second), domHit: ago(3 * time.Second), want: CauseNodeBudget},
		{name: "domain full (held, then released)", domHit: ago(4 * time.Second), want: CauseNodeBudget},
		{name: "own limit long ago, domain never", ctrHit: ago(2 * HitWindow), want: CauseHost},
		{name: "neither", want: CauseHost},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ClassifyOOM(now, tc.ctrHit, tc.domHit); got != tc.want {
				t.Errorf("ClassifyOOM = %s, want %s", got, tc.want)
			}
		})
	}
}
