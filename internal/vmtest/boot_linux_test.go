package vmtest

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"testing"
	"time"
)

// vmSuite starts a test of the VM suite: it skips unless TENON_VMTEST is
// set, and returns the handler for a missing QEMU or kernel (a skip with
// TENON_VMTEST=1, a failure with =require, as CI runs it).
func vmSuite(t *testing.T) (unavailable func(error)) {
	t.Helper()
	mode := os.Getenv("TENON_VMTEST")
	if mode == "" {
		t.Skip("the cgroup v2 VM suite boots only with TENON_VMTEST=1 (QEMU, a kernel download, a few minutes)")
	}
	return func(err error) {
		t.Helper()
		var ue *UnavailableError
		if errors.As(err, &ue) && mode != "require" {
			t.Skip(err)
		}
		t.Fatal(err)
	}
}

// guestKernel checks for QEMU and returns the pinned guest kernel's image
// and, with modules, its zram module and the module zram depends on
// (DebianCloudZram), fetched into the cache once.
func guestKernel(ctx context.Context, t *testing.T, unavailable func(error), modules bool) (string, []string) {
	t.Helper()
	if _, err := exec.LookPath(qemuBinary); err != nil {
		unavailable(&UnavailableError{What: qemuBinary, Err: err})
	}
	cache, err := DefaultCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	kernel, err := DebianCloud.Image(ctx, cache)
	if err != nil {
		unavailable(err)
	}
	if !modules {
		return kernel, nil
	}
	mods, err := DebianCloudZram.Files(ctx, cache)
	if err != nil {
		unavailable(err)
	}
	return kernel, mods
}

// bootGuest boots cfg and returns the result. The emulated guest kernel
// itself may crash (an "Oops: int3" in the scheduler under TCG was seen):
// that is the emulator's failure, not tenon's. It boots once more; twice
// is a skip that says so, with the console. On return the kernel's console
// is logged if the test fails later.
func bootGuest(ctx context.Context, t *testing.T, cfg Config, unavailable func(error)) *Result {
	t.Helper()
	var res *Result
	for boot := 1; ; boot++ {
		var err error
		if res, err = Run(ctx, cfg); err != nil {
			if res != nil {
				t.Logf("kernel console:\n%s", res.Console)
			}
			unavailable(err)
		}
		if !guestCrashed(res.Console) {
			break
		}
		t.Logf("boot %d: the guest kernel crashed; console (end):\n%s", boot, tail(res.Console, 4000))
		if boot == 2 {
			t.Skip("the guest kernel crashed twice under QEMU (emulator or kernel fault, not a test failure); see the console above")
		}
	}
	t.Logf("%s boot: test runner after %s, all done after %s", res.Accel, res.Ready.Round(time.Millisecond), res.Elapsed.Round(time.Millisecond))
	t.Cleanup(func() {
		if t.Failed() { // the guest kernel's own account (OOM kills, crashes)
			t.Logf("kernel console (end):\n%s", tail(res.Console, 8000))
		}
	})
	return res
}
