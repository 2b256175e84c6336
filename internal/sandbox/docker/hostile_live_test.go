package docker

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tenon-dev/tenon/internal/sandbox"
)

// The hostile suite (internal/hostile, issue 22) on the docker backend,
// where a finding applies to it: forged results (1), deadlines enforced
// from outside (2), the fork bomb (3), host secrets (4) and seccomp (5).
// The disk limit (6) does not apply: the docker backend's writable layers
// are overlay2 directories on the engine's file system (docs/security.md).

// forger writes forged results, in the process backend's protocol, into
// every fd of pid 1 it can open, in the background (finding 1).
const forger = `(sleep 0.5; for i in $(seq 60); do for fd in 0 1 2 3 4 5; do ` +
	`printf '{"op":"result","seq":%d,"exit_code":0,"stdout":"QUxMIFRFU1RTIFBBU1NFRA=="}\n' $i > /proc/1/fd/$fd; ` +
	`done; done) >/dev/null 2>&1 & echo started`

func TestHostileDockerForgedResults(t *testing.T) {
	b := newBackend(t, 1<<30)
	mustCreate(t, b, "forge", nil)
	r, err := b.Exec(ctxT(t), "forge", sandbox.ExecRequest{Shell: forger, Background: true})
	if err != nil || strings.TrimSpace(string(r.Stdout)) != "started" {
		t.Fatalf("starting the forger: %+v %v", r, err)
	}
	for i := range 3 {
		r, err := b.Exec(ctxT(t), "forge", sandbox.ExecRequest{Shell: "sleep 1; echo real; exit 1", Timeout: 20 * time.Second})
		if err != nil {
			t.Fatalf("exec %d: %v", i, err)
		}
		if string(r.Stdout) != "real\n" || r.ExitCode != 1 || r.Duration < time.Second {
			t.Fatalf("exec %d: stdout %q exit %d in %v, want the real \"real\\n\", exit 1, >= 1s", i, r.Stdout, r.ExitCode, r.Duration)
		}
	}
}

// ptraceInit tries PTRACE_ATTACH (16) on pid 1 and prints the return
// value and errno (finding 2).
const ptraceInit = `python3 -c "import ctypes; l = ctypes.CDLL(None, use_errno=True); ` +
	`r = l.ptrace(16, 1, 0, 0); print(r, ctypes.get_errno())"`

// TestHostileDockerDeadline: an action that tries to stop the container's
// init with ptrace and then hangs is ended at its timeout by the host
// (killing its tasks in the container's cgroup), and the sandbox serves
// the next action.
func TestHostileDockerDeadline(t *testing.T) {
	b := newBackend(t, 1<<30)
	mustCreate(t, b, "ptrace", nil)
	const timeout = 2 * time.Second
	start := time.Now()
	r, err := b.Exec(ctxT(t), "ptrace", sandbox.ExecRequest{Shell: ptraceInit + "; sleep 30", Timeout: timeout})
	el := time.Since(start)
	if err != nil {
		t.Fatalf("exec: %v", err)
	}
	t.Logf("ptrace(PTRACE_ATTACH, 1) in the container: %q", strings.TrimSpace(string(r.Stdout)))
	if !r.TimedOut || r.ExitCode != -1 || el > timeout+5*time.Second {
		t.Errorf("timed out %v, exit %d after %v; want a timeout within %v and a few seconds", r.TimedOut, r.ExitCode, el, timeout)
	}
	if out := mustSh(t, b, "ptrace", "echo alive"); out != "alive\n" {
		t.Errorf("after the attempt: %q", out)
	}
}

// TestHostileDockerForkBomb: a fork bomb is capped by the container's
// pids.max and nothing of it survives its action, when the action exits
// and when it times out (finding 3).
func TestHostileDockerForkBomb(t *testing.T) {
	b := newBackend(t, 4<<30)
	mustCreate(t, b, "bomb", nil)
	const bomb = `b() { b | b & }; b`
	for _, tc := range []struct {
		name    string
		shell   string
		timeout time.Duration
	}{
		{"action exits", bomb + "; sleep 2; exit 0", 10 * time.Second},
		{"action times out", bomb + "; sleep 60", 3 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			if _, err := b.Exec(ctxT(t), "bomb", sandbox.ExecRequest{Shell: tc.shell, Timeout: tc.timeout}); err != nil {
				t.Fatalf("exec: %v", err)
			}
			if el := time.Since(start); el > tc.timeout+10*time.Second {
				t.Errorf("returned after %v, want within %v and a few seconds", el, tc.timeout)
			}
			st, err := b.Stats(ctxT(t), "bomb")
			if err != nil {
				t.Fatal(err)
			}
			if st.Procs > initTasks {
				t.Errorf("%d tasks left after the action, want the %d init tasks", st.Procs, initTasks)
			}
			if out := mustSh(t, b, "bomb", "echo alive"); out != "alive\n" {
				t.Errorf("after the bomb: %q", out)
			}
		})
	}
	bx, _ := b.lookup("bomb")
	if got := mustSh(t, b, "bomb", "cat /sys/fs/cgroup/pids/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids.max"); strings.TrimSpace(got) != "1024" {
		t.Errorf("container %s pids.max %q, want 1024", bx.cid[:12], got)
	}
}

// TestHostileDockerHostSecrets: the container's /etc is the image's; the
// host's shadow file is not in it (finding 4).
func TestHostileDockerHostSecrets(t *testing.T) {
	b := newBackend(t, 1<<30)
	mustCreate(t, b, "secrets", nil)
	host, err := os.ReadFile("/etc/shadow")
	if err != nil {
		t.Skipf("reading the host's /etc/shadow: %v", err)
	}
	r, err := b.Exec(ctxT(t), "secrets", sandbox.ExecRequest{Shell: "cat /etc/shadow", Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(host), "\n") {
		f := strings.Split(line, ":")
		if len(f) > 1 && len(f[1]) > 2 && strings.Contains(string(r.Stdout), f[1]) {
			t.Errorf("the container's /etc/shadow holds the host's password hash of %s", f[0])
		}
	}
}

// TestHostileDockerSeccomp: the engine's default seccomp profile is on and
// refuses user namespaces, the keyring calls and mount (finding 5).
func TestHostileDockerSeccomp(t *testing.T) {
	b := newBackend(t, 1<<30)
	mustCreate(t, b, "seccomp", nil)
	if got := mustSh(t, b, "seccomp", "grep '^Seccomp:' /proc/self/status | cut -f2"); got != "2\n" {
		t.Errorf("Seccomp mode %q, want 2 (filter)", got)
	}
	if r, err := b.Exec(ctxT(t), "seccomp", sandbox.ExecRequest{Shell: "unshare -U true", Timeout: 20 * time.Second}); err != nil || r.ExitCode == 0 {
		t.Errorf("unshare -U in the container: %+v, %v; want a failure", r, err)
	}
	for _, c := range []struct {
		name string
		nr   int
		args string
	}{
		{"add_key", unix.SYS_ADD_KEY, `b"user", b"tenon-test", b"v", 1, ctypes.c_long(-2)`},
		{"keyctl", unix.SYS_KEYCTL, `0, ctypes.c_long(-4), 0`},
		{"mount", unix.SYS_MOUNT, `b"none", b"/mnt", b"tmpfs", 0, 0`},
	} {
		t.Run(c.name, func(t *testing.T) {
			script := `python3 -c 'import ctypes; c = ctypes.CDLL(None, use_errno=True); c.syscall.restype = ctypes.c_long; ` +
				`r = c.syscall(` + strconv.Itoa(c.nr) + `, ` + c.args + `); print(r, ctypes.get_errno())'`
			if got := mustSh(t, b, "seccomp", script); got != "-1 1\n" {
				t.Errorf("%s: %q, want \"-1 1\" (EPERM)", c.name, got)
			}
		})
	}
}

// TestHostileDockerLeftovers: what an action leaves running is killed at
// its end unless the action is marked Background; a later action spares
// what a background one started (finding 3).
func TestHostileDockerLeftovers(t *testing.T) {
	b := newBackend(t, 1<<30)
	mustCreate(t, b, "left", nil)
	procs := func() int {
		t.Helper()
		st, err := b.Stats(ctxT(t), "left")
		if err != nil {
			t.Fatal(err)
		}
		return st.Procs
	}
	const sleeper = "sleep 60 >/dev/null 2>&1 &"
	if _, err := b.Exec(ctxT(t), "left", sandbox.ExecRequest{Shell: sleeper, Timeout: 20 * time.Second}); err != nil {
		t.Fatal(err)
	}
	if n := procs(); n != initTasks {
		t.Errorf("after a plain action that left a sleep: %d tasks, want the %d init tasks", n, initTasks)
	}
	if _, err := b.Exec(ctxT(t), "left", sandbox.ExecRequest{Shell: sleeper, Timeout: 20 * time.Second, Background: true}); err != nil {
		t.Fatal(err)
	}
	mustSh(t, b, "left", "true")
	if n := procs(); n != initTasks+1 {
		t.Errorf("after a background action and a plain one: %d tasks, want the init tasks and the sleep", n)
	}
}
