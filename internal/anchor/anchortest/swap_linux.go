//go:build linux

package anchortest

import (
	"context"
	"log/slog"
	"os"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/tenon-dev/tenon/internal/swap"
)

// Swap turns zram swap of size bytes on for the test and off at cleanup,
// holding the zram lock the whole time (zram0 is shared with other
// packages' live tests). It skips without root, pidfd_open (and so
// process_madvise), the zram module, or when zram0 is already in use. what
// names the test in skip messages ("live page-out test").
func Swap(t testing.TB, size int64, what string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skipf("%s needs root (swapon, cgroups, process_madvise)", what)
	}
	if fd, err := unix.PidfdOpen(os.Getpid(), 0); err != nil {
		t.Skipf("%s needs pidfd_open/process_madvise: %v", what, err)
	} else {
		unix.Close(fd)
	}
	unlock, err := swap.Lock()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(unlock)
	st, err := swap.GetStatus()
	if err != nil {
		t.Fatalf("swap status: %v", err)
	}
	if !st.Present {
		t.Skipf("%s needs the zram module (/sys/block/zram0)", what)
	}
	if st.Active || st.DiskSize != 0 {
		t.Skipf("zram0 is already in use (active=%v disksize=%d): not touching it", st.Active, st.DiskSize)
	}
	t.Cleanup(func() {
		if err := swap.Disable(context.Background()); err != nil {
			t.Errorf("cleanup: turning zram swap off: %v", err)
		}
	})
	if err := swap.Enable(context.Background(), size, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatalf("enabling zram swap: %v", err)
	}
}
