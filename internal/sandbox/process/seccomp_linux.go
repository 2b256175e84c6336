//go:build linux && (amd64 || arm64)

package process

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The sandbox's seccomp filter, installed by the executor on itself before
// it serves actions (so every process of the sandbox inherits it; see
// confine). It follows Docker's default profile for a container without
// CAP_SYS_ADMIN, CAP_SYS_PTRACE and the other capabilities the sandbox
// lacks, written as a deny list: the calls Docker's profile leaves out
// fail with EPERM, everything else is allowed. Docker's profile is an allow
// list compiled by libseccomp (cgo, and a build tag for runc's seccomp
// package); this one is a few dozen classic BPF instructions built here,
// with no C dependency. A deny list lets a system call newer than the list
// through, where an allow list would refuse it; the calls that reach
// outside a sandbox are all named below (docs/security.md).

// deniedCommon are the calls refused on every architecture, grouped as in
// docs/security.md.
var deniedCommon = []uint32{
	// Kernel keyrings are not namespaced: add_key reached the host's.
	unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY, unix.SYS_KEYCTL,
	// Joining namespaces (creating them: cloneFlagCalls).
	unix.SYS_SETNS,
	// Tracing and reading other processes, pid 1 (the executor) included.
	unix.SYS_PTRACE, unix.SYS_PROCESS_VM_READV, unix.SYS_PROCESS_VM_WRITEV,
	unix.SYS_KCMP, unix.SYS_PIDFD_GETFD,
	// Mounting, old and new API.
	unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_PIVOT_ROOT, unix.SYS_MOVE_MOUNT,
	unix.SYS_OPEN_TREE, unix.SYS_FSOPEN, unix.SYS_FSCONFIG, unix.SYS_FSMOUNT,
	unix.SYS_FSPICK, unix.SYS_MOUNT_SETATTR,
	// Replacing the kernel, loading modules, rebooting.
	unix.SYS_KEXEC_LOAD, unix.SYS_KEXEC_FILE_LOAD, unix.SYS_REBOOT,
	unix.SYS_INIT_MODULE, unix.SYS_FINIT_MODULE, unix.SYS_DELETE_MODULE,
	// The host's clock.
	unix.SYS_SETTIMEOFDAY, unix.SYS_CLOCK_SETTIME, unix.SYS_CLOCK_ADJTIME,
	// File handles (the "shocker" escape), accounting, quotas, swap.
	unix.SYS_NAME_TO_HANDLE_AT, unix.SYS_OPEN_BY_HANDLE_AT, unix.SYS_ACCT,
	unix.SYS_QUOTACTL, unix.SYS_QUOTACTL_FD, unix.SYS_SWAPON, unix.SYS_SWAPOFF,
	unix.SYS_NFSSERVCTL,
	// Kernel interfaces with a record of exploits, or host-wide effects.
	unix.SYS_BPF, unix.SYS_PERF_EVENT_OPEN, unix.SYS_USERFAULTFD, unix.SYS_LOOKUP_DCOOKIE,
	unix.SYS_FANOTIFY_INIT, unix.SYS_SYSLOG, unix.SYS_VHANGUP,
	unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER,
	// NUMA placement (Docker: CAP_SYS_NICE only).
	unix.SYS_GET_MEMPOLICY, unix.SYS_SET_MEMPOLICY, unix.SYS_MBIND,
	unix.SYS_MOVE_PAGES, unix.SYS_MIGRATE_PAGES,
}

// cloneFlagCalls take clone flags in their first argument; they are refused
// when a namespace flag is set (unshare -U makes a user namespace in which
// the caller holds every capability).
var cloneFlagCalls = []uint32{unix.SYS_CLONE, unix.SYS_UNSHARE}

// namespaceFlags are the clone flags that make new namespaces.
const namespaceFlags = unix.CLONE_NEWNS | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC |
	unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET | unix.CLONE_NEWCGROUP |
	unix.CLONE_NEWTIME

// enosysCalls fail with ENOSYS: clone3 passes its flags in memory, which
// seccomp cannot read, so it is refused as unimplemented and glibc and Go
// fall back to clone (Docker does the same).
var enosysCalls = []uint32{unix.SYS_CLONE3}

// Offsets in struct seccomp_data (little-endian: the low word of args[0]).
const (
	offNr   = 0
	offArch = 4
	offArg0 = 16
)

const (
	retAllow  = unix.SECCOMP_RET_ALLOW
	retEPERM  = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	retENOSYS = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
)

// seccompFilter returns the sandbox's filter for the architecture arch
// (an AUDIT_ARCH_ value), denying denied, cloneFlagCalls with a namespace
// flag, and enosysCalls. Calls made through another architecture's ABI
// (32-bit x86 on amd64) and x32 calls (numbers with bit 30 set) are denied
// whole, since the numbers above are the native ones.
func seccompFilter(arch uint32, denied []uint32) ([]unix.SockFilter, error) {
	stmt := func(code uint16, k uint32) unix.SockFilter { return unix.SockFilter{Code: code, K: k} }
	jump := func(code uint16, k uint32, jt, jf int) unix.SockFilter {
		return unix.SockFilter{Code: unix.BPF_JMP | code | unix.BPF_K, K: k, Jt: uint8(jt), Jf: uint8(jf)}
	}
	const ld = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
	const ret = unix.BPF_RET | unix.BPF_K
	const head = 4 // instructions before the per-call checks
	checks := len(denied) + len(cloneFlagCalls) + len(enosysCalls)
	// The tail, after the checks at head .. head+checks-1.
	allow := head + checks
	flags := allow + 1 // ld arg0; jset namespaceFlags
	enosys := flags + 3
	deny := enosys + 1
	if deny-head > 255 {
		return nil, fmt.Errorf("seccomp filter: %d checks exceed a jump's reach", checks)
	}
	p := []unix.SockFilter{
		stmt(ld, offArch),
		jump(unix.BPF_JEQ, arch, 0, deny-2),
		stmt(ld, offNr),
		jump(unix.BPF_JGE, 0x40000000, deny-4, 0),
	}
	for _, nr := range denied {
		p = append(p, jump(unix.BPF_JEQ, nr, deny-len(p)-1, 0))
	}
	for _, nr := range cloneFlagCalls {
		p = append(p, jump(unix.BPF_JEQ, nr, flags-len(p)-1, 0))
	}
	for _, nr := range enosysCalls {
		p = append(p, jump(unix.BPF_JEQ, nr, enosys-len(p)-1, 0))
	}
	p = append(p,
		stmt(ret, retAllow),
		stmt(ld, offArg0),
		jump(unix.BPF_JSET, namespaceFlags, deny-flags-2, 0),
		stmt(ret, retAllow),
		stmt(ret, retENOSYS),
		stmt(ret, retEPERM),
	)
	return p, nil
}

// confine sets no_new_privs and installs the sandbox's seccomp filter on
// every thread of the calling process; its children inherit both.
func confine() error {
	filter, err := seccompFilter(seccompArch, append(deniedCommon, deniedArch...))
	if err != nil {
		return err
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("setting no_new_privs: %w", err)
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	_, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER,
		unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&prog)))
	if errno != 0 {
		return fmt.Errorf("installing the seccomp filter: %w", errno)
	}
	return nil
}
