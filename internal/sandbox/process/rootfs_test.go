//go:build linux

package process

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/opencontainers/runc/libcontainer/configs"
	"golang.org/x/sys/unix"
)

// fakeHost builds a host root with a real /usr and /etc, merged-/usr
// symlinks for /bin, /lib and /sbin, and no /lib64.
func fakeHost(t *testing.T) string {
	root := t.TempDir()
	for _, d := range []string{"usr/bin", "usr/lib", "usr/sbin", "etc"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, l := range []string{"bin", "lib", "sbin"} {
		if err := os.Symlink("usr/"+l, filepath.Join(root, l)); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestHostSystemDirs(t *testing.T) {
	got, err := hostSystemDirs(fakeHost(t))
	if err != nil {
		t.Fatal(err)
	}
	want := []systemDir{
		{path: "/usr"},
		{path: "/bin", target: "usr/bin"}, {path: "/sbin", target: "usr/sbin"}, {path: "/lib", target: "usr/lib"},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("hostSystemDirs = %+v, want %+v", got, want)
	}
}

func TestMakeRootfs(t *testing.T) {
	sys, err := hostSystemDirs(fakeHost(t))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "rootfs")
	if err := makeRootfs(dir, sys); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path   string
		mode   os.FileMode // permission bits and sticky; 0 for symlinks
		target string
	}{
		{"tmp", os.ModeSticky | 0o777, ""},
		{"root", 0o700, ""},
		{"workspace", 0o755, ""},
		{"usr", 0o755, ""},
		{"etc", 0o755, ""},
		{"bin", 0, "usr/bin"},
		{"lib", 0, "usr/lib"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			p := filepath.Join(dir, tt.path)
			fi, err := os.Lstat(p)
			if err != nil {
				t.Fatal(err)
			}
			if tt.target != "" {
				got, err := os.Readlink(p)
				if err != nil || got != tt.target {
					t.Fatalf("%s -> %q (%v), want -> %q", tt.path, got, err, tt.target)
				}
				return
			}
			if !fi.IsDir() || fi.Mode()&(os.ModePerm|os.ModeSticky) != tt.mode {
				t.Fatalf("%s: mode %v, want dir %v", tt.path, fi.Mode(), tt.mode)
			}
		})
	}
	if _, err := os.Lstat(filepath.Join(dir, "lib64")); !os.IsNotExist(err) {
		t.Errorf("lib64 (absent on the host): %v, want absent", err)
	}
	if err := makeRootfs(dir, sys); err == nil {
		t.Errorf("makeRootfs over an existing dir succeeded")
	}
}

func TestContainerConfig(t *testing.T) {
	sys := []systemDir{{path: "/usr"}, {path: "/bin", target: "usr/bin"}}
	spec := containerSpec{
		id: "sb-1", rootfs: "/state/sb-1/rootfs", workspace: "/ws", exe: "/host/tenon",
		localBin: "/state/bin", cgroupPath: "dom/sb-1", system: sys,
		etc: "/state/etc", etcBinds: []etcBind{{src: "/etc/ld.so.cache", dst: "/etc/ld.so.cache"}},
		hosts: "/state/sb-1/hosts", resolvConf: "/etc/resolv.conf",
	}
	tests := []struct {
		name    string
		network bool
		wantNet bool // own network namespace
	}{
		{"isolated", false, true},
		{"host network", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := spec
			s.network = tt.network
			c := containerConfig(s)
			if got := c.Namespaces.Contains(configs.NEWNET); got != tt.wantNet {
				t.Errorf("NEWNET = %v, want %v", got, tt.wantNet)
			}
			for _, ns := range []configs.NamespaceType{configs.NEWNS, configs.NEWPID, configs.NEWIPC, configs.NEWUTS} {
				if !c.Namespaces.Contains(ns) {
					t.Errorf("namespace %s missing", ns)
				}
			}
			if c.Cgroups.Path != "/dom/sb-1" || c.Rootfs != s.rootfs {
				t.Errorf("cgroup %q rootfs %q", c.Cgroups.Path, c.Rootfs)
			}
			for _, bad := range []string{"CAP_SYS_ADMIN", "CAP_MKNOD", "CAP_DAC_OVERRIDE", "CAP_NET_RAW", "CAP_SYS_PTRACE"} {
				if slices.Contains(c.Capabilities.Bounding, bad) {
					t.Errorf("capabilities include %s: %v", bad, c.Capabilities.Bounding)
				}
			}
			byDest := map[string]*configs.Mount{}
			for _, m := range c.Mounts {
				byDest[m.Destination] = m
			}
			if m := byDest["/etc"]; m == nil || m.Source != "/state/etc" {
				t.Errorf("/etc: %+v, want the generated /state/etc", m)
			}
			for _, dst := range []string{"/usr", "/etc", "/etc/ld.so.cache", "/etc/hosts", "/etc/resolv.conf", "/usr/local/bin", exeMount} {
				m := byDest[dst]
				if m == nil || m.Device != "bind" || m.Flags&unix.MS_RDONLY == 0 || m.RecAttr == nil {
					t.Errorf("%s: %+v, want a recursive read-only bind", dst, m)
				}
			}
			if m := byDest["/bin"]; m != nil {
				t.Errorf("/bin is a symlink on the host but bound: %+v", m)
			}
			if m := byDest["/workspace"]; m == nil || m.Source != "/ws" || m.Flags&unix.MS_RDONLY != 0 {
				t.Errorf("/workspace: %+v, want a read-write bind of /ws", m)
			}
			// The binds into /etc come after /etc itself.
			for _, dst := range []string{"/etc/ld.so.cache", "/etc/hosts", "/etc/resolv.conf"} {
				if slices.Index(c.Mounts, byDest[dst]) < slices.Index(c.Mounts, byDest["/etc"]) {
					t.Errorf("%s is mounted before /etc", dst)
				}
			}
			// The executable's mount point lies inside the /usr/local/bin bind.
			if i, j := slices.Index(c.Mounts, byDest["/usr/local/bin"]), slices.Index(c.Mounts, byDest[exeMount]); i > j {
				t.Errorf("tenon is mounted before /usr/local/bin")
			}
		})
	}
}

func TestMountPointsUnder(t *testing.T) {
	const info = `22 1 0:21 / / rw - ext4 /dev/vda rw
30 22 0:30 / /state/sandboxes/a rw - tmpfs tmpfs rw
31 30 0:31 / /state/sandboxes/a/rootfs/usr ro - ext4 /dev/vda ro
32 22 0:32 / /state/sandboxes/ab rw - tmpfs tmpfs rw
33 30 0:33 / /state/sandboxes/a/with\040space rw - tmpfs tmpfs rw
`
	got, err := mountPointsUnder(strings.NewReader(info), "/state/sandboxes/a")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"/state/sandboxes/a/rootfs/usr", "/state/sandboxes/a/with space", "/state/sandboxes/a"}
	if !slices.Equal(got, want) {
		t.Fatalf("mountPointsUnder = %q, want %q (deepest first, no sibling prefix)", got, want)
	}
}

func TestForeignParents(t *testing.T) {
	root := t.TempDir()
	proc := filepath.Join(root, "proc")
	mem, dev := filepath.Join(root, "cg/memory"), filepath.Join(root, "cg/devices")
	blk := filepath.Join(root, "cg/blkio")
	for _, d := range []string{filepath.Join(proc, "self"), filepath.Join(mem, "dom/sub"), dev, filepath.Join(blk, "dom/sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	info := "40 22 0:40 / " + mem + " rw - cgroup cgroup rw,memory\n" +
		"41 22 0:41 / " + dev + " rw - cgroup cgroup rw,devices\n" +
		"43 22 0:43 / " + blk + " rw - cgroup cgroup rw,blkio\n" +
		"42 22 0:42 / /other rw - ext4 /dev/vda rw\n"
	if err := os.WriteFile(filepath.Join(proc, "self", "mountinfo"), []byte(info), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, parent string
		own          []string
		want         []string
	}{
		{"missing levels, and the leaf a crash left", "dom/sub", []string{mem},
			[]string{filepath.Join(dev, "dom"), filepath.Join(dev, "dom/sub"), filepath.Join(blk, "dom/sub")}},
		{"missing everywhere", "x", []string{mem},
			[]string{filepath.Join(dev, "x"), filepath.Join(blk, "x")}},
		{"no hierarchy is the domain's", "x", nil,
			[]string{filepath.Join(mem, "x"), filepath.Join(dev, "x"), filepath.Join(blk, "x")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := foreignParents(proc, tt.parent, tt.own)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("foreignParents = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestCompleteRootfsPlantedSymlink: a restored layer whose var is a
// symbolic link out of the rootfs (a sandbox ran ln -s /etc /var before
// its teardown) fails to complete, and nothing is made or chmodded where
// the link points.
func TestCompleteRootfsPlantedSymlink(t *testing.T) {
	for _, tc := range []struct {
		name   string
		target func(outside string) string
	}{
		{"absolute", func(outside string) string { return outside }},
		{"relative", func(outside string) string { return "../" + filepath.Base(outside) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			outside := filepath.Join(base, "host-etc")
			if err := os.Mkdir(outside, 0o700); err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(base, "rootfs")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(tc.target(outside), filepath.Join(dir, "var")); err != nil {
				t.Fatal(err)
			}
			err := completeRootfs(dir, []systemDir{{path: "/usr"}})
			if err == nil || !strings.Contains(err.Error(), "var/tmp") {
				t.Errorf("completeRootfs with var -> %s: %v, want an error naming var/tmp", tc.target(outside), err)
			}
			entries, err := os.ReadDir(outside)
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) != 0 {
				t.Errorf("the link's target got %d entries (first %s), want none", len(entries), entries[0].Name())
			}
			if fi, err := os.Stat(outside); err != nil || fi.Mode().Perm() != 0o700 {
				t.Errorf("the link's target: %v, %v; want its mode 0700 untouched", fi.Mode(), err)
			}
		})
	}
}

// TestCompleteRootfsInnerSymlink: a link that stays inside the rootfs is
// the sandbox's own layout, followed there.
func TestCompleteRootfsInnerSymlink(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rootfs")
	if err := os.MkdirAll(filepath.Join(dir, "srv"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("srv", filepath.Join(dir, "var")); err != nil {
		t.Fatal(err)
	}
	if err := completeRootfs(dir, nil); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, "srv", "tmp"))
	if err != nil || fi.Mode()&(os.ModePerm|os.ModeSticky) != os.ModeSticky|0o777 {
		t.Fatalf("srv/tmp through var -> srv: %v, %v; want a sticky 0777 directory", fi, err)
	}
}
