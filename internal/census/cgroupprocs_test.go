package census

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseProcs(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []int
		wantErr bool
	}{
		{name: "empty", in: ""},
		{name: "pids", in: "12\n7\n\n", want: []int{12, 7}},
		{name: "garbage", in: "12\nx\n", wantErr: true},
		{name: "zero", in: "0\n", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseProcs(strings.NewReader(tt.in))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestCgroupPidsRecursive(t *testing.T) {
	root := t.TempDir()
	write := func(rel, s string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("sb/cgroup.procs", "1\n2\n")
	write("sb/tool/cgroup.procs", "3\n")
	write("sb/tool/deeper/cgroup.procs", "")
	write("other/cgroup.procs", "9\n")
	got, err := CgroupPids(filepath.Join(root, "sb"))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	if !slices.Equal(got, []int{1, 2, 3}) {
		t.Errorf("pids = %v, want [1 2 3]", got)
	}
	if _, err := CgroupPids(filepath.Join(root, "missing")); err == nil {
		t.Error("missing cgroup: want error")
	}
}
