//go:build linux

package process

import (
	"errors"
	"io"
	"syscall"
	"time"
	"unsafe"
)

// The executor must survive a workload domain held at its budget (the v1
// OOM hold, memory.oom_control's oom_kill_disable) after its sandbox was
// paged out. There a page fault the kernel takes on the executor's behalf
// (not one of its own instructions) cannot charge a page: the charge
// fails instead of waiting in the OOM wait, which only user-mode faults
// do. A system call whose buffer lies on a swapped-out page fails with
// EFAULT, and a signal whose frame would go on a swapped-out signal stack
// kills the process with SIGSEGV (si_code SI_KERNEL): the "sandbox init
// has exited" of the live trace replays. So the executor takes no signals
// (asyncpreemptoff in its GODEBUG, SIGCHLD left at SIG_DFL and children
// reaped by a blocking wait instead) and retries a read or write that
// failed with EFAULT after touching its buffer from user mode, where the
// fault waits for memory like any other.

// heldRetries bounds the retries of one read or write: each touches the
// whole buffer, so a second EFAULT needs the page to be reclaimed again
// in between.
const heldRetries = 100

// heldReader retries EFAULT (see above); a unix socket or pipe keeps the
// data a failed copy did not take.
type heldReader struct{ r io.Reader }

func (h heldReader) Read(p []byte) (int, error) {
	for i := 0; ; i++ {
		n, err := h.r.Read(p)
		if n > 0 || !errors.Is(err, syscall.EFAULT) || i == heldRetries {
			return n, err
		}
		touchWrite(p)
	}
}

// heldWriter retries EFAULT (see above) for what was not written yet,
// and, for up to heldWriteFor, a write that failed for want of kernel
// memory (ENOMEM, ENOBUFS, EAGAIN: the socket's buffer is kernel memory
// the domain at its budget may refuse), continuing where it stopped, so
// that a result line is never cut short and written again.
type heldWriter struct {
	w     io.Writer
	sleep func(time.Duration) // nil: time.Sleep
}

// heldWriteFor bounds the retries of a write refused for want of kernel
// memory; the host's action deadline bounds the wait anyway.
const heldWriteFor = 30 * time.Second

func (h heldWriter) Write(p []byte) (int, error) {
	written, faults := 0, 0
	var waited time.Duration
	wait := time.Millisecond
	for {
		n, err := h.w.Write(p[written:])
		written += n
		switch {
		case err == nil:
			return written, nil
		case errors.Is(err, syscall.EFAULT) && faults < heldRetries:
			faults++
			touchRead(p[written:])
		case (errors.Is(err, syscall.ENOMEM) || errors.Is(err, syscall.ENOBUFS) || errors.Is(err, syscall.EAGAIN)) && waited < heldWriteFor:
			sleep := h.sleep
			if sleep == nil {
				sleep = time.Sleep
			}
			sleep(wait)
			waited += wait
			wait = min(2*wait, 100*time.Millisecond)
		default:
			return written, err
		}
	}
}

const pageSize = 4096

// touchWrite writes a zero to every page of p (a read buffer: what it
// held is overwritten anyway).
func touchWrite(p []byte) {
	for i := 0; i < len(p); i += pageSize {
		p[i] = 0
	}
	if len(p) > 0 {
		p[len(p)-1] = 0
	}
}

// touchSink keeps touchRead's loads from being optimised away.
var touchSink byte

// touchRead loads a byte of every page of p.
func touchRead(p []byte) {
	var s byte
	for i := 0; i < len(p); i += pageSize {
		s += p[i]
	}
	if len(p) > 0 {
		s += p[len(p)-1]
	}
	touchSink = s
}

// defaultSIGCHLD sets SIGCHLD back to SIG_DFL, which the Go runtime
// replaced with its handler: a child's exit then delivers nothing (the
// default action is to ignore it, without reaping, so waitid still sees
// the child).
func defaultSIGCHLD() error {
	var sa [4]uint64 // struct sigaction, zero: SIG_DFL, no flags, no mask
	_, _, errno := syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, uintptr(syscall.SIGCHLD),
		uintptr(unsafe.Pointer(&sa)), 0, 8, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}
