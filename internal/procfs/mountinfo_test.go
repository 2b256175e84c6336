package procfs

import (
	"slices"
	"strings"
	"testing"
)

const mountinfo = `155 52 0:39 / / rw,relatime - overlay overlay rw,lowerdir=/s/layers/b:/s/layers/a,upperdir=/s/sb/fs/rootfs,workdir=/s/sb/fs/work,uuid=on
165 155 254:0 /tmp/with\040space /.tenon/tenon ro,nodev,relatime - ext4 /dev/vda rw,discard
30 25 0:26 / /sys/fs/cgroup/memory rw,nosuid - cgroup cgroup rw,memory
`

func TestParseMountinfo(t *testing.T) {
	ms, err := ParseMountinfo(strings.NewReader(mountinfo))
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 3 {
		t.Fatalf("%d mounts, want 3", len(ms))
	}
	o := ms[0]
	if o.Dev != mkdev(0, 39) || o.MountPoint != "/" || o.FSType != "overlay" || o.Source != "overlay" {
		t.Errorf("overlay mount %+v", o)
	}
	if v, ok := o.Option("lowerdir"); !ok || v != "/s/layers/b:/s/layers/a" {
		t.Errorf("lowerdir %q %v", v, ok)
	}
	if _, ok := o.Option("index"); ok {
		t.Error("an absent option was found")
	}
	if b := ms[1]; b.Root != "/tmp/with space" || b.Dev != mkdev(254, 0) || b.MountPoint != "/.tenon/tenon" ||
		!slices.Equal(b.MountOptions, []string{"ro", "nodev", "relatime"}) {
		t.Errorf("bind mount %+v", b)
	}
	if c := ms[2]; !slices.Equal(c.Options, []string{"rw", "memory"}) {
		t.Errorf("cgroup options %v", c.Options)
	}
	for _, bad := range []string{"1 2 0:1 / /x rw\n", "1 2 zero / /x rw - ext4 /dev/x rw\n", "1 2 0:1 / - ext4\n"} {
		if _, err := ParseMountinfo(strings.NewReader(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}
