package swap

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// LockPath is the host-wide lock file of zram0's users.
var LockPath = filepath.Join(os.TempDir(), "tenon-zram.lock")

// Lock takes the host-wide zram lock, waiting for it: every user of zram0
// (`tenon harness replay`, the live tests of several packages that
// `go test ./...` runs in parallel) holds it while it checks, enables,
// uses and disables the device. unlock releases it.
func Lock() (unlock func(), err error) {
	f, err := os.OpenFile(LockPath, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening zram lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("taking zram lock %s: %w", LockPath, err)
	}
	return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}
