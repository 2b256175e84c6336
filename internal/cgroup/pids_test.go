package cgroup

import (
	"errors"
	"path/filepath"
	"testing"
)

func TestSetPidsLimit(t *testing.T) {
	tests := []struct {
		name string
		v2   bool
		n    int64
		want string
	}{
		{name: "v1 capped", n: 1024, want: "1024"},
		{name: "v1 unlimited", n: 0, want: "max"},
		{name: "v2 capped", v2: true, n: 64, want: "64"},
		{name: "v2 unlimited", v2: true, n: -1, want: "max"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := fakeV1(t)
			if tc.v2 {
				l = fakeV2(t)
			}
			g := mustCreate(t, l, "tenon/sb")
			if err := g.SetPidsLimit(tc.n); err != nil {
				t.Fatal(err)
			}
			if got := readFile(t, filepath.Join(g.dirs[Pids], "pids.max")); got != tc.want {
				t.Errorf("pids.max = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestSetPidsLimitNoHierarchy(t *testing.T) {
	g := mustCreate(t, fakeV1(t), "tenon/sb")
	delete(g.dirs, Pids)
	if err := g.SetPidsLimit(10); !errors.Is(err, ErrNoHierarchy) {
		t.Errorf("SetPidsLimit without a pids hierarchy: %v, want ErrNoHierarchy", err)
	}
}
