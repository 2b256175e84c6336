//go:build linux && (amd64 || arm64)

package process

import (
	"testing"

	"golang.org/x/sys/unix"
)

// runFilter interprets the instructions seccompFilter emits on one call.
func runFilter(t *testing.T, p []unix.SockFilter, arch, nr, arg0 uint32) uint32 {
	t.Helper()
	var acc uint32
	for pc := 0; pc < len(p); pc++ {
		in := p[pc]
		switch in.Code {
		case unix.BPF_LD | unix.BPF_W | unix.BPF_ABS:
			switch in.K {
			case offNr:
				acc = nr
			case offArch:
				acc = arch
			case offArg0:
				acc = arg0
			default:
				t.Fatalf("load of offset %d", in.K)
			}
		case unix.BPF_RET | unix.BPF_K:
			return in.K
		case unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K, unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K:
			var cond bool
			switch in.Code &^ (unix.BPF_JMP | unix.BPF_K) {
			case unix.BPF_JEQ:
				cond = acc == in.K
			case unix.BPF_JGE:
				cond = acc >= in.K
			case unix.BPF_JSET:
				cond = acc&in.K != 0
			}
			if cond {
				pc += int(in.Jt)
			} else {
				pc += int(in.Jf)
			}
		default:
			t.Fatalf("instruction %d: code %#x", pc, in.Code)
		}
	}
	t.Fatalf("ran off the end of the filter")
	return 0
}

func TestSeccompFilter(t *testing.T) {
	denied := append(deniedCommon, deniedArch...)
	p, err := seccompFilter(seccompArch, denied)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		arch, nr uint32
		arg0     uint32
		want     uint32
	}{
		{"read", seccompArch, unix.SYS_READ, 0, retAllow},
		{"openat", seccompArch, unix.SYS_OPENAT, 0, retAllow},
		{"add_key", seccompArch, unix.SYS_ADD_KEY, 0, retEPERM},
		{"keyctl", seccompArch, unix.SYS_KEYCTL, 0, retEPERM},
		{"ptrace", seccompArch, unix.SYS_PTRACE, 0, retEPERM},
		{"mount", seccompArch, unix.SYS_MOUNT, 0, retEPERM},
		{"kexec_load", seccompArch, unix.SYS_KEXEC_LOAD, 0, retEPERM},
		{"finit_module", seccompArch, unix.SYS_FINIT_MODULE, 0, retEPERM},
		{"last denied", seccompArch, denied[len(denied)-1], 0, retEPERM},
		{"fork by clone", seccompArch, unix.SYS_CLONE, uint32(unix.SIGCHLD), retAllow},
		{"thread by clone", seccompArch, unix.SYS_CLONE, unix.CLONE_VM | unix.CLONE_THREAD | unix.CLONE_SIGHAND, retAllow},
		{"clone a user namespace", seccompArch, unix.SYS_CLONE, unix.CLONE_NEWUSER | uint32(unix.SIGCHLD), retEPERM},
		{"unshare files", seccompArch, unix.SYS_UNSHARE, unix.CLONE_FILES, retAllow},
		{"unshare -Urm", seccompArch, unix.SYS_UNSHARE, unix.CLONE_NEWUSER | unix.CLONE_NEWNS, retEPERM},
		{"unshare a net namespace", seccompArch, unix.SYS_UNSHARE, unix.CLONE_NEWNET, retEPERM},
		{"clone3", seccompArch, unix.SYS_CLONE3, 0, retENOSYS},
		{"x32 read", seccompArch, 0x40000000 | unix.SYS_READ, 0, retEPERM},
		{"foreign architecture", unix.AUDIT_ARCH_I386, unix.SYS_READ, 0, retEPERM},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := runFilter(t, p, tt.arch, tt.nr, tt.arg0); got != tt.want {
				t.Errorf("filter(%d) = %#x, want %#x", tt.nr, got, tt.want)
			}
		})
	}
}

func TestSeccompFilterTooLong(t *testing.T) {
	if _, err := seccompFilter(seccompArch, make([]uint32, 300)); err == nil {
		t.Fatal("a filter whose jumps cannot reach its end was built")
	}
}
