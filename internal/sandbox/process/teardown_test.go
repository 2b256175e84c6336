//go:build linux

package process

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTeardownKeepsFilesWhenUnmountFails: when the mounts under a
// sandbox's directory cannot be listed or unmounted, teardown neither
// removes the directory (it would delete through a mount still there)
// nor releases the image hold (a gc could remove layers a mounted overlay
// uses), and says so; with the mount table readable it does both.
func TestTeardownKeepsFilesWhenUnmountFails(t *testing.T) {
	for _, tc := range []struct {
		name      string
		mountinfo func(dir string) string
		kept      bool
	}{
		{"mount table unreadable", func(string) string { return filepath.Join(t.TempDir(), "missing-mountinfo") }, true},
		{"nothing mounted", func(dir string) string {
			p := filepath.Join(t.TempDir(), "mountinfo")
			line := "22 1 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw\n"
			if err := os.WriteFile(p, []byte(line), 0o644); err != nil {
				t.Fatal(err)
			}
			return p
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "sb-1")
			if err := os.MkdirAll(filepath.Join(dir, "rootfs", "tmp"), 0o755); err != nil {
				t.Fatal(err)
			}
			released := false
			bx := &box{id: "sb-1", dir: dir, mountinfo: tc.mountinfo(dir), release: func() { released = true }}
			err := bx.teardown(context.Background())
			_, statErr := os.Stat(filepath.Join(dir, "rootfs", "tmp"))
			if tc.kept {
				if err == nil || !strings.Contains(err.Error(), "kept") {
					t.Errorf("teardown = %v, want an error saying the files are kept", err)
				}
				if statErr != nil || released {
					t.Errorf("files %v, released %v: want the files and the hold kept", statErr, released)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !os.IsNotExist(statErr) || !released {
				t.Errorf("files %v, released %v: want the directory removed and the hold released", statErr, released)
			}
		})
	}
}
