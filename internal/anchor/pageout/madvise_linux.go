//go:build linux

package pageout

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/tenon-dev/tenon/internal/procfs"
)

// iovMax is the most ranges one process_madvise call takes (UIO_MAXIOV).
const iovMax = 1024

// iovec is struct iovec: a base address in the target and a length.
type iovec struct {
	base uintptr
	len  uintptr
}

// madvise applies advice to ranges of pid through a pidfd, IOV_MAX ranges
// per call. A range the kernel refuses (unmapped since maps was read,
// locked) is skipped; the process being gone or the call being unsupported
// or forbidden is an error. It returns the bytes the kernel accepted.
func madvise(pid int, ranges []procfs.Mapping, advice int) (int64, error) {
	pidfd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ENOSYS) {
		return 0, ErrNoProcessMadvise
	}
	if err != nil {
		return 0, fmt.Errorf("pidfd_open %d: %w", pid, err)
	}
	defer unix.Close(pidfd)
	iov := make([]iovec, 0, len(ranges))
	for _, r := range ranges {
		iov = append(iov, iovec{base: uintptr(r.Start), len: uintptr(r.Size())})
	}
	var total int64
	for len(iov) > 0 {
		batch := iov[:min(len(iov), iovMax)]
		n, _, errno := unix.Syscall6(unix.SYS_PROCESS_MADVISE, uintptr(pidfd),
			uintptr(unsafe.Pointer(&batch[0])), uintptr(len(batch)), uintptr(advice), 0, 0)
		switch errno {
		case 0:
			total += int64(n)
			iov = advance(iov, uint64(n))
		case unix.EINTR, unix.EAGAIN:
			// retry the same batch
		case unix.ENOMEM, unix.EINVAL, unix.EFAULT:
			iov = iov[1:] // the first remaining range is refused: skip it
		case unix.ENOSYS:
			return total, ErrNoProcessMadvise
		default:
			return total, fmt.Errorf("process_madvise: %w", errno)
		}
	}
	return total, nil
}

// advance drops n bytes from the front of iov.
func advance(iov []iovec, n uint64) []iovec {
	for len(iov) > 0 && n > 0 {
		if n < uint64(iov[0].len) {
			iov[0].base += uintptr(n)
			iov[0].len -= uintptr(n)
			return iov
		}
		n -= uint64(iov[0].len)
		iov = iov[1:]
	}
	for len(iov) > 0 && iov[0].len == 0 {
		iov = iov[1:]
	}
	return iov
}
