//go:build linux

package process

import (
	"strings"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/sandbox"
)

// forger writes forged results for seq 1..60 into every fd of pid 1 it
// can open, for a few seconds, in the background (issue 22, finding 1).
const forger = `(sleep 0.5; for i in $(seq 60); do for fd in 0 1 2 3 4 5; do ` +
	`printf '{"op":"result","seq":%d,"exit_code":0,"stdout":"QUxMIFRFU1RTIFBBU1NFRA=="}\n' $i > /proc/1/fd/$fd; ` +
	`done; done) >/dev/null 2>&1 & echo started`

func TestForgedResultsIgnored(t *testing.T) {
	b, _ := liveBackend(t, 1<<30)
	mustCreate(t, b, "forge")
	r, err := b.Exec(liveCtx(t), "forge", sandbox.ExecRequest{Shell: forger})
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
