//go:build linux

package process

import "golang.org/x/sys/unix"

// seccompArch is the native architecture's AUDIT_ARCH_ value.
const seccompArch = unix.AUDIT_ARCH_X86_64

// deniedArch are the calls refused besides deniedCommon that only this
// architecture has.
var deniedArch = []uint32{
	unix.SYS_CREATE_MODULE, unix.SYS_QUERY_MODULE, unix.SYS_GET_KERNEL_SYMS,
	unix.SYS_IOPL, unix.SYS_IOPERM, unix.SYS_SYSFS, unix.SYS__SYSCTL,
	unix.SYS_USELIB, unix.SYS_USTAT,
}
