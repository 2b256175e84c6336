//go:build linux

package process

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/sandbox"
)

// forger writes forged results for seq 1..60 into every fd of pid 1 it
// can open, for a few seconds, in the background (issue 22, finding 1).
const forger = `(sleep 0.5; for i in $(seq 60); do for fd in 0 1 2 3 4 5; do ` +
	`printf '{"op":"result","seq":%d,"exit_code":0,"stdout":"QUxMIFRFU1RTIFBBU1NFRA=="}\n' $i > /proc/1/fd/$fd; ` +
	`done; done) >/dev/null 2>&1 & echo started`

func TestHostileForgedResults(t *testing.T) {
	b, _ := liveBackend(t, 1<<30)
	mustCreate(t, b, "forge")
	r, err := b.Exec(liveCtx(t), "forge", sandbox.ExecRequest{Shell: forger, Background: true})
	if err != nil || strings.TrimSpace(string(r.Stdout)) != "started" {
		t.Fatalf("starting the forger: %+v %v", r, err)
	}
	for i := range 3 {
		r, err := b.Exec(liveCtx(t), "forge", sandbox.ExecRequest{Shell: "sleep 1; echo real; exit 1", Timeout: 20 * time.Second})
		if err != nil {
			t.Fatalf("exec %d: %v", i, err)
		}
		if string(r.Stdout) != "real\n" || r.ExitCode != 1 || r.Duration < time.Second {
			t.Fatalf("exec %d: stdout %q exit %d in %v, want the real \"real\\n\", exit 1, >= 1s", i, r.Stdout, r.ExitCode, r.Duration)
		}
	}
	// pid 1's descriptors are out of reach: not dumpable, no CAP_SYS_PTRACE.
	for _, cmd := range []string{"echo x > /proc/1/fd/1", "echo x > /proc/1/fd/3", "readlink /proc/1/fd/3", "cat /proc/1/environ"} {
		r, err := b.Exec(liveCtx(t), "forge", sandbox.ExecRequest{Shell: cmd})
		if err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
		if r.ExitCode == 0 {
			t.Errorf("%s: exit 0, want a failure (pid 1's fds reachable)", cmd)
		}
	}
}

// ptraceInit tries PTRACE_ATTACH (16) on pid 1 and prints the return value
// and errno (issue 22, finding 2).
const ptraceInit = `python3 -c "import ctypes; l = ctypes.CDLL(None, use_errno=True); ` +
	`r = l.ptrace(16, 1, 0, 0); print(r, ctypes.get_errno())"`

func TestHostilePtraceOfInit(t *testing.T) {
	b, _ := liveBackend(t, 1<<30)
	mustCreate(t, b, "ptrace")
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("the ptrace check runs python3 from the host's /usr: not installed")
	}
	const timeout = 2 * time.Second
	start := time.Now()
	r, err := b.Exec(liveCtx(t), "ptrace", sandbox.ExecRequest{Shell: ptraceInit + "; sleep 30", Timeout: timeout})
	el := time.Since(start)
	if err != nil {
		t.Fatalf("exec: %v", err)
	}
	if got := strings.TrimSpace(string(r.Stdout)); got != "-1 1" {
		t.Errorf("ptrace(PTRACE_ATTACH, 1): %q, want \"-1 1\" (EPERM); stderr %q", got, r.Stderr)
	}
	if !r.TimedOut || el > timeout+deadlineGrace+answerGrace+2*time.Second {
		t.Errorf("timed out %v after %v, want true within %v plus the graces", r.TimedOut, el, timeout)
	}
	if out := mustSh(t, b, "ptrace", "echo alive"); out != "alive\n" {
		t.Errorf("after the attempt: %q", out)
	}
}

// TestHostileDeadlineFromOutside stops the executor from the host (what a
// successful ptrace attach did): the host must still end the exec on time,
// with a timed-out result, and kill the sandbox whose executor is stuck.
func TestHostileDeadlineFromOutside(t *testing.T) {
	b, _ := liveBackend(t, 1<<30)
	info := mustCreate(t, b, "stuck")
	if err := syscall.Kill(info.InitPid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	const timeout = time.Second
	start := time.Now()
	r, err := b.Exec(liveCtx(t), "stuck", sandbox.ExecRequest{Shell: "sleep 30", Timeout: timeout})
	el := time.Since(start)
	if !errors.Is(err, sandbox.ErrSandboxDead) {
		t.Errorf("exec with a stopped executor: %v, want ErrSandboxDead", err)
	}
	if !r.TimedOut || r.ExitCode != -1 {
		t.Errorf("result timed out %v exit %d, want true -1", r.TimedOut, r.ExitCode)
	}
	if max := timeout + deadlineGrace + answerGrace + killTimeout; el > max {
		t.Errorf("exec returned after %v, want within %v", el, max)
	}
	if err := syscall.Kill(info.InitPid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the stuck executor (pid %d) still exists: %v", info.InitPid, err)
	}
}

// A sandbox's root can make a setuid-root file in its writable layer;
// on the host, that layer lies under the state directory, which a host
// user must not be able to reach (they would run the file as root), even
// where the state directory itself is open to all.
func TestSetuidLayerOutOfReach(t *testing.T) {
	open, err := os.MkdirTemp("", "tenon-state-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(open) })
	if err := os.Chmod(open, 0o755); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(open, "state")
	b, _ := liveBackend(t, 1<<30, func(c *Config) { c.StateDir = state })
	mustCreate(t, b, "suid")
	mustSh(t, b, "suid", "cp /bin/sh /tmp/suid-sh && chmod 4755 /tmp/suid-sh")
	// The layer is <state>/sandboxes/suid/rootfs, or under the disk
	// limit's mount there.
	var planted string
	_ = filepath.WalkDir(filepath.Join(state, "sandboxes", "suid"), func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == "suid-sh" {
			planted = p
			return filepath.SkipAll
		}
		return nil
	})
	if fi, err := os.Stat(planted); err != nil || fi.Mode()&os.ModeSetuid == 0 {
		t.Fatalf("the planted file on the host: %v, %v; want a setuid file under %s/sandboxes/suid", fi, err, state)
	}
	// As nobody, the host path does not resolve.
	cmd := exec.Command("/bin/sh", "-c", `test -e "$1" && echo reachable || echo denied`, "sh", planted)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("running as nobody: %v", err)
	}
	if got := strings.TrimSpace(string(out)); got != "denied" {
		t.Errorf("a host user (nobody) reaches %s: %s", planted, got)
	}
}
