//go:build linux

package process

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/disk"
	"github.com/tenon-dev/tenon/internal/sandbox"
)

// TestHostileDiskLimit reproduces issue 22's finding 6: `fallocate -l 1G` in /tmp
// and in /workspace meets the sandbox's disk limit (64 MiB here) with
// ENOSPC and ExecResult.DiskFull; deleting the file frees the space; Destroy
// leaves no mount and no loop device.
func TestHostileDiskLimit(t *testing.T) {
	if err := disk.Check(); err != nil {
		t.Skipf("per-sandbox disk limit: %v", err)
	}
	b, _ := liveBackend(t, 1<<30, func(c *Config) { c.DiskMax = 64 << 20 })
	if _, err := b.Create(liveCtx(t), sandbox.Spec{ID: "disk-1"}); err != nil {
		t.Fatal(err)
	}
	bx, err := b.get("disk-1")
	if err != nil {
		t.Fatal(err)
	}
	mnt := bx.disk
	for _, dir := range []string{"/tmp", "/workspace"} {
		r, err := b.Exec(liveCtx(t), "disk-1", sandbox.ExecRequest{Shell: "fallocate -l 1G " + dir + "/big", Timeout: 20 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if r.ExitCode == 0 || !strings.Contains(string(r.Stderr), "No space left on device") || !r.DiskFull {
			t.Errorf("fallocate -l 1G in %s = exit %d, stderr %q, DiskFull %v; want ENOSPC and DiskFull", dir, r.ExitCode, r.Stderr, r.DiskFull)
		}
		r, err = b.Exec(liveCtx(t), "disk-1", sandbox.ExecRequest{Shell: "rm " + dir + "/big && echo ok > " + dir + "/small && cat " + dir + "/small", Timeout: 20 * time.Second})
		if err != nil || r.ExitCode != 0 || string(r.Stdout) != "ok\n" || r.DiskFull {
			t.Errorf("after removing the file in %s: %+v, %v; want room again", dir, r, err)
		}
	}
	if err := b.Destroy(liveCtx(t), "disk-1"); err != nil {
		t.Fatal(err)
	}
	if m, _ := os.ReadFile("/proc/self/mountinfo"); strings.Contains(string(m), mnt) {
		t.Errorf("%s still mounted after Destroy", mnt)
	}
	if _, err := os.Stat(bx.dir); !os.IsNotExist(err) {
		t.Errorf("sandbox dir after Destroy: %v, want gone (with its image)", err)
	}
}
