package vmtest

import "fmt"

// UnavailableError says that something the VM needs is missing on the host
// (QEMU, busybox, dpkg-deb, the kernel download). Callers skip on it.
type UnavailableError struct {
	What string // what is missing, e.g. "qemu-system-x86_64"
	Err  error  // why, when known
}

func (e *UnavailableError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("vmtest: %s is unavailable", e.What)
	}
	return fmt.Sprintf("vmtest: %s is unavailable: %v", e.What, e.Err)
}

func (e *UnavailableError) Unwrap() error { return e.Err }
