//go:build linux

package process

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tenon-dev/tenon/internal/sandbox"
)

// needSeccomp skips unless the kernel filters system calls with seccomp.
func needSeccomp(t *testing.T) {
	t.Helper()
	status, err := os.ReadFile("/proc/self/status")
	if err != nil || !strings.Contains(string(status), "\nSeccomp:") {
		t.Skip("the kernel has no seccomp (CONFIG_SECCOMP_FILTER)")
	}
}

// syscallScript is a python3 program that makes the system call nr with
// integer arguments and prints "<return> <errno>".
func syscallScript(nr int, args ...string) string {
	return fmt.Sprintf(`python3 -c 'import ctypes; c = ctypes.CDLL(None, use_errno=True); `+
		`c.syscall.restype = ctypes.c_long; r = c.syscall(%d, %s); print(r, ctypes.get_errno())'`,
		nr, strings.Join(args, ", "))
}

// Issue 22, finding 5: no seccomp; unshare -Urm gave a full-capability user
// namespace and add_key reached the host's keyring.
func TestHostileSeccomp(t *testing.T) {
	needSeccomp(t)
	b, _ := liveBackend(t, 1<<30)
	mustCreate(t, b, "seccomp")
	if got := mustSh(t, b, "seccomp", "grep '^Seccomp:' /proc/self/status | cut -f2"); got != "2\n" {
		t.Errorf("Seccomp mode %q, want 2 (filter)", got)
	}
	// unshare -U alone makes the namespace (and succeeds without the
	// filter even where writing the uid map then fails).
	for _, cmd := range []string{"unshare -U true", "unshare -Urm true"} {
		t.Run(cmd, func(t *testing.T) {
			if !sandboxHas("unshare") {
				t.Skip("the host has no /usr/bin/unshare")
			}
			if err := exec.Command("unshare", "-U", "true").Run(); err != nil {
				t.Skipf("the host kernel makes no user namespaces (unshare -U true: %v)", err)
			}
			r := run(t, b, "seccomp", cmd)
			if r.ExitCode == 0 {
				t.Errorf("%s succeeded in the sandbox", cmd)
			}
			t.Logf("%s: exit %d, %s", cmd, r.ExitCode, r.Stderr)
		})
	}
	// Refused calls return -1 with EPERM; the key would go to the
	// process keyring (-2), which ends with the process, should one get through.
	calls := []struct {
		name string
		nr   int
		args []string
	}{
		{"add_key", unix.SYS_ADD_KEY, []string{`b"user"`, `b"tenon-test"`, `b"v"`, "1", "ctypes.c_long(-2)"}},
		{"keyctl", unix.SYS_KEYCTL, []string{"0", "ctypes.c_long(-4)", "0"}},
		{"ptrace pid 1", unix.SYS_PTRACE, []string{"16", "1", "0", "0"}},
		{"ptrace a sibling", unix.SYS_PTRACE, []string{"16", `int(open("/tmp/sleep.pid").read())`, "0", "0"}},
		{"mount", unix.SYS_MOUNT, []string{`b"none"`, `b"/mnt"`, `b"tmpfs"`, "0", "0"}},
	}
	// The sibling outlives its action: the action is marked background.
	if r, err := b.Exec(liveCtx(t), "seccomp", sandbox.ExecRequest{Shell: "sleep 60 >/dev/null 2>&1 & echo $! > /tmp/sleep.pid",
		Timeout: 20 * time.Second, Background: true}); err != nil || r.ExitCode != 0 {
		t.Fatalf("starting the sibling: %+v %v", r, err)
	}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			if !sandboxHas("python3") {
				t.Skip("the host has no /usr/bin/python3")
			}
			if c.name == "add_key" || c.name == "keyctl" {
				if _, err := os.Stat("/proc/keys"); err != nil {
					t.Skip("the kernel has no keyrings (CONFIG_KEYS)")
				}
			}
			if got := mustSh(t, b, "seccomp", syscallScript(c.nr, c.args...)); got != "-1 1\n" {
				t.Errorf("%s: %q, want \"-1 1\" (EPERM)", c.name, got)
			}
		})
	}
	mustSh(t, b, "seccomp", "kill $(cat /tmp/sleep.pid)")
}
