package census

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tenon-dev/tenon/internal/procfs"
)

func TestOverlayMounts(t *testing.T) {
	d := t.TempDir()
	upper, top, base := filepath.Join(d, "upper"), filepath.Join(d, "top"), filepath.Join(d, "base")
	write := func(p string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(base, "bin/tool"))
	write(filepath.Join(base, "bin/changed"))
	write(filepath.Join(top, "bin/changed"))
	write(filepath.Join(upper, "etc/mine"))
	write(filepath.Join(base, "etc/gone"))
	if err := os.Symlink("elsewhere", filepath.Join(upper, "etc/gone")); err != nil { // stands in for a whiteout
		t.Fatal(err)
	}
	info := strings.Join([]string{
		"155 52 0:39 / / rw - overlay overlay rw,lowerdir=" + top + ":" + base + ",upperdir=" + upper + ",workdir=" + d + "/work",
		"156 155 0:40 / /mnt/ro rw - overlay overlay ro,lowerdir=" + top + "::" + base,
		"157 155 0:41 / /docker rw - overlay overlay rw,lowerdir=l/ABC:l/DEF,upperdir=diff,workdir=work",
		"158 155 254:0 / /data rw - ext4 /dev/vda rw",
	}, "\n")
	ms, err := procfs.ParseMountinfo(strings.NewReader(info))
	if err != nil {
		t.Fatal(err)
	}
	ovs := overlayMounts(ms)
	if len(ovs) != 2 {
		t.Fatalf("%d overlays, want the two with absolute layers: %+v", len(ovs), ovs)
	}
	if !slices.Equal(ovs[0].lowers, []string{top, base}) || !slices.Equal(ovs[1].lowers, []string{top, base}) {
		t.Errorf("lowers %v, %v; want [top base] both", ovs[0].lowers, ovs[1].lowers)
	}
	root, ok := overlayOf(ovs, ms[0].Dev)
	if !ok {
		t.Fatal("overlayOf missed the root overlay")
	}
	tests := []struct{ path, want string }{
		{"/bin/tool", filepath.Join(base, "bin/tool")},
		{"/bin/changed", filepath.Join(top, "bin/changed")},
		{"/etc/mine", filepath.Join(upper, "etc/mine")},
		{"/etc/gone", ""}, // the top layer's entry is not a file
		{"/nothing", ""},
	}
	for _, tt := range tests {
		if got := root.realPath(tt.path); got != tt.want {
			t.Errorf("realPath(%s) = %q, want %q", tt.path, got, tt.want)
		}
	}
	sub := ovs[1]
	if got := sub.realPath("/mnt/ro/bin/tool"); got != filepath.Join(base, "bin/tool") {
		t.Errorf("under /mnt/ro: %q", got)
	}
	if got := sub.realPath("/mnt/robin/tool"); got != "" {
		t.Errorf("a sibling path of the mount point resolved to %q", got)
	}
	if _, ok := overlayOf(ovs, ms[3].Dev); ok {
		t.Error("an ext4 mount taken for an overlay")
	}
}
