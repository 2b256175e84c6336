package cgroup

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// hybridMountinfo is this project's build host (trimmed of non-cgroup lines
// except one, which the parser must skip).
const hybridMountinfo = `24 1 0:22 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
36 31 0:33 / /sys/fs/cgroup/devices rw,relatime - cgroup cgroup rw,devices
37 31 0:34 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer
38 31 0:35 / /sys/fs/cgroup/blkio rw,relatime - cgroup cgroup rw,blkio
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
`

// v1Mountinfo is a classic systemd v1 host: cpu and cpuacct co-mounted.
const v1Mountinfo = `25 21 0:22 / /sys/fs/cgroup ro,nosuid,nodev,noexec shared:9 - tmpfs tmpfs ro,mode=755
28 25 0:25 / /sys/fs/cgroup/systemd rw,nosuid,nodev,noexec,relatime shared:11 - cgroup cgroup rw,xattr,name=systemd
31 25 0:28 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid,nodev,noexec,relatime shared:14 - cgroup cgroup rw,cpu,cpuacct
32 25 0:29 / /sys/fs/cgroup/memory rw,nosuid,nodev,noexec,relatime shared:15 - cgroup cgroup rw,memory
33 25 0:30 / /sys/fs/cgroup/freezer rw,nosuid,nodev,noexec,relatime shared:16 - cgroup cgroup rw,freezer
34 25 0:31 / /sys/fs/cgroup/pids rw,nosuid,nodev,noexec,relatime shared:17 - cgroup cgroup rw,pids
`

// v2Mountinfo is a pure unified host.
const v2Mountinfo = `22 26 0:20 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw
27 22 0:23 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot
`

func TestParseMountinfo(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []MountInfo
		wantErr bool
	}{
		{name: "v2", in: v2Mountinfo, want: []MountInfo{{Root: "/", MountPoint: "/sys/fs/cgroup", FSType: "cgroup2", Options: []string{"rw", "nsdelegate", "memory_recursiveprot"}}}},
		{name: "co-mounted v1", in: v1Mountinfo[strings.Index(v1Mountinfo, "31 25"):strings.Index(v1Mountinfo, "32 25")],
			want: []MountInfo{{Root: "/", MountPoint: "/sys/fs/cgroup/cpu,cpuacct", FSType: "cgroup", Options: []string{"rw", "cpu", "cpuacct"}}}},
		{name: "escaped space and nested root", in: `40 31 0:32 /docker/abc /sys/fs/cgroup/my\040mem rw - cgroup cgroup rw,memory` + "\n",
			want: []MountInfo{{Root: "/docker/abc", MountPoint: "/sys/fs/cgroup/my mem", FSType: "cgroup", Options: []string{"rw", "memory"}}}},
		{name: "no cgroup mounts", in: "22 26 0:20 / /sys rw shared:7 - sysfs sysfs rw\n", want: nil},
		{name: "missing separator", in: "22 26 0:20 / /sys rw shared:7 sysfs sysfs rw\n", wantErr: true},
		{name: "too few fields", in: "22 26 - cgroup cgroup rw\n", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseMountinfo(strings.NewReader(tc.in))
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if !slices.EqualFunc(got, tc.want, func(a, b MountInfo) bool {
				return a.Root == b.Root && a.MountPoint == b.MountPoint && a.FSType == b.FSType && slices.Equal(a.Options, b.Options)
			}) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestDetect(t *testing.T) {
	type want struct {
		version Version
		root    string // relative to the fake root
	}
	tests := []struct {
		name        string
		mountinfo   string
		controllers string // content of the cgroup2 root's cgroup.controllers
		want        map[string]want
		unified     string
		wantErr     error
	}{
		{
			name: "hybrid build host", mountinfo: hybridMountinfo, controllers: "hugetlb\n",
			want: map[string]want{
				Memory: {V1, "/sys/fs/cgroup/memory"}, CPU: {V1, "/sys/fs/cgroup/cpu"}, CPUAcct: {V1, "/sys/fs/cgroup/cpuacct"},
				Freezer: {V1, "/sys/fs/cgroup/freezer"}, Pids: {V1, "/sys/fs/cgroup/pids"},
			},
			unified: "/sys/fs/cgroup/unified",
		},
		{
			name: "v1 only, cpu and cpuacct co-mounted", mountinfo: v1Mountinfo,
			want: map[string]want{
				Memory: {V1, "/sys/fs/cgroup/memory"}, CPU: {V1, "/sys/fs/cgroup/cpu,cpuacct"}, CPUAcct: {V1, "/sys/fs/cgroup/cpu,cpuacct"},
				Freezer: {V1, "/sys/fs/cgroup/freezer"}, Pids: {V1, "/sys/fs/cgroup/pids"},
			},
		},
		{
			name: "v2 only", mountinfo: v2Mountinfo, controllers: "cpuset cpu io memory hugetlb pids rdma misc\n",
			want: map[string]want{
				Memory: {V2, "/sys/fs/cgroup"}, CPU: {V2, "/sys/fs/cgroup"}, CPUAcct: {V2, "/sys/fs/cgroup"},
				Freezer: {V2, "/sys/fs/cgroup"}, Pids: {V2, "/sys/fs/cgroup"},
			},
			unified: "/sys/fs/cgroup",
		},
		{
			name: "hybrid with memory on v2", mountinfo: strings.Replace(hybridMountinfo, "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n", "", 1),
			controllers: "memory\n",
			want: map[string]want{
				Memory: {V2, "/sys/fs/cgroup/unified"}, CPU: {V1, "/sys/fs/cgroup/cpu"}, CPUAcct: {V1, "/sys/fs/cgroup/cpuacct"},
				Freezer: {V1, "/sys/fs/cgroup/freezer"}, Pids: {V1, "/sys/fs/cgroup/pids"},
			},
			unified: "/sys/fs/cgroup/unified",
		},
		{name: "v2 without memory", mountinfo: v2Mountinfo, controllers: "cpu pids\n", wantErr: ErrNoMemoryController},
		{name: "hybrid without memory", mountinfo: strings.Replace(hybridMountinfo, "rw,memory", "rw,hugetlb", 1), controllers: "", wantErr: ErrNoMemoryController},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			proc := filepath.Join(root, "proc")
			writeFiles(t, filepath.Join(proc, "self"), map[string]string{"mountinfo": tc.mountinfo})
			if tc.unified != "" || tc.controllers != "" {
				u := tc.unified
				if u == "" {
					u = "/sys/fs/cgroup/unified"
				}
				writeFiles(t, filepath.Join(root, u), map[string]string{"cgroup.controllers": tc.controllers})
			}
			f, err := os.Open(filepath.Join(proc, "self", "mountinfo"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			mounts, err := ParseMountinfo(f)
			if err != nil {
				t.Fatal(err)
			}
			l, err := LayoutFromMounts(mounts, root)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(l.Controllers) != len(tc.want) {
				t.Errorf("controllers = %v, want %d of them", l.Controllers, len(tc.want))
			}
			for c, w := range tc.want {
				got, ok := l.Controller(c)
				if !ok || got.Version != w.version || got.Root != filepath.Join(root, w.root) {
					t.Errorf("%s = %+v (present %v), want v%d at %s", c, got, ok, w.version, w.root)
				}
			}
			wantUnified := ""
			if tc.unified != "" {
				wantUnified = filepath.Join(root, tc.unified)
			}
			if l.Unified != wantUnified {
				t.Errorf("Unified = %q, want %q", l.Unified, wantUnified)
			}
		})
	}
}

// TestDetectReadsProcRoot checks Detect's own file handling: a missing
// mountinfo is an error, and ProcRoot is recorded.
func TestDetectReadsProcRoot(t *testing.T) {
	if _, err := Detect(t.TempDir()); err == nil {
		t.Error("Detect on an empty proc root succeeded")
	}
	proc := t.TempDir()
	writeFiles(t, filepath.Join(proc, "self"), map[string]string{"mountinfo": v1Mountinfo})
	l, err := Detect(proc)
	if err != nil {
		t.Fatal(err)
	}
	if l.ProcRoot != proc {
		t.Errorf("ProcRoot = %q, want %q", l.ProcRoot, proc)
	}
	if m := l.Controllers[Memory]; m.Root != "/sys/fs/cgroup/memory" || m.Version != V1 {
		t.Errorf("memory = %+v", m)
	}
	if !strings.Contains(l.String(), "memory=v1:/sys/fs/cgroup/memory") {
		t.Errorf("String() = %q", l.String())
	}
}

func TestNoMemoryControllerSaysWhatToDo(t *testing.T) {
	if !strings.Contains(ErrNoMemoryController.Error(), "mount") {
		t.Errorf("ErrNoMemoryController does not say what to do: %q", ErrNoMemoryController)
	}
}

func TestLayoutDirs(t *testing.T) {
	l := &Layout{Controllers: map[string]Mount{
		Memory: {V1, "/sys/fs/cgroup/memory"}, CPU: {V1, "/sys/fs/cgroup/cpu,cpuacct"}, CPUAcct: {V1, "/sys/fs/cgroup/cpu,cpuacct"},
	}}
	got, err := l.Dirs("/tenon/sb-1")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		Memory: "/sys/fs/cgroup/memory/tenon/sb-1", CPU: "/sys/fs/cgroup/cpu,cpuacct/tenon/sb-1", CPUAcct: "/sys/fs/cgroup/cpu,cpuacct/tenon/sb-1",
	}
	if len(got) != len(want) {
		t.Fatalf("Dirs = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("Dirs[%s] = %q, want %q", k, got[k], v)
		}
	}
	if _, err := l.Dirs("../x"); err == nil {
		t.Error("Dirs(../x) succeeded")
	}
}
