package sandboxtest

import (
	"strconv"
	"strings"
	"time"

	"github.com/tenon-dev/tenon/internal/sandbox"
)

func testEcho(e *env) {
	e.needPrograms("the output of echo")
	id := e.create(sandbox.Spec{}).ID
	r := e.exec(id, sandbox.ExecRequest{Argv: []string{"echo", "hello", "world"}})
	if r.ExitCode != 0 || string(r.Stdout) != "hello world\n" || len(r.Stderr) != 0 {
		e.t.Fatalf("echo: exit %d stdout %q stderr %q, want 0 %q %q", r.ExitCode, r.Stdout, r.Stderr, "hello world\n", "")
	}
	if r.Duration <= 0 || r.TimedOut || r.OOMKilled || r.StdoutTruncated {
		e.t.Errorf("echo: duration %v timedOut %v oom %v truncated %v", r.Duration, r.TimedOut, r.OOMKilled, r.StdoutTruncated)
	}
}

func testExitCode(e *env) {
	id := e.create(sandbox.Spec{}).ID
	tests := []struct {
		name     string
		req      sandbox.ExecRequest
		want     int
		programs bool // needs real programs
	}{
		{"exit 3", sandbox.ExecRequest{Shell: "exit 3"}, 3, false},
		{"false", sandbox.ExecRequest{Argv: []string{"false"}}, 1, false},
		{"killed by signal", sandbox.ExecRequest{Shell: "kill -9 $$"}, -1, true},
		{"missing program", sandbox.ExecRequest{Argv: []string{"tenon-no-such-program"}}, 127, true},
	}
	for _, tt := range tests {
		e.step(tt.name, tt.programs, func(e *env) {
			if r := e.exec(id, tt.req); r.ExitCode != tt.want {
				e.t.Errorf("exit code %d, want %d (stderr %q)", r.ExitCode, tt.want, r.Stderr)
			}
		})
	}
}

func testStderr(e *env) {
	e.needPrograms("stdout and stderr kept apart")
	id := e.create(sandbox.Spec{}).ID
	r := e.exec(id, sandbox.ExecRequest{Shell: "echo out; echo oops >&2; exit 2"})
	if string(r.Stdout) != "out\n" || string(r.Stderr) != "oops\n" || r.ExitCode != 2 {
		e.t.Fatalf("got exit %d stdout %q stderr %q, want 2 %q %q", r.ExitCode, r.Stdout, r.Stderr, "out\n", "oops\n")
	}
}

func testOutputCap(e *env) {
	e.needPrograms("output capped per stream")
	id := e.create(sandbox.Spec{}).ID
	tests := []struct {
		name               string
		outBytes, errBytes int
		limit              int
		wantOut, wantErr   int
		truncOut, truncErr bool
	}{
		{"both over", 100000, 5000, 1000, 1000, 1000, true, true},
		{"stdout over only", 3000, 10, 1000, 1000, 10, true, false},
		{"exactly at limit", 1000, 0, 1000, 1000, 0, false, false},
		{"default limit", 2000, 0, 0, 2000, 0, false, false},
	}
	for _, tt := range tests {
		cmd := "head -c " + strconv.Itoa(tt.outBytes) + " /dev/zero; head -c " + strconv.Itoa(tt.errBytes) + " /dev/zero >&2"
		r := e.exec(id, sandbox.ExecRequest{Shell: cmd, OutputLimit: tt.limit})
		if len(r.Stdout) != tt.wantOut || len(r.Stderr) != tt.wantErr ||
			r.StdoutTruncated != tt.truncOut || r.StderrTruncated != tt.truncErr || r.ExitCode != 0 {
			e.t.Errorf("%s: exit %d stdout %d bytes (truncated %v) stderr %d (truncated %v); want %d (%v) %d (%v)",
				tt.name, r.ExitCode, len(r.Stdout), r.StdoutTruncated, len(r.Stderr), r.StderrTruncated,
				tt.wantOut, tt.truncOut, tt.wantErr, tt.truncErr)
		}
	}
}

func testCwdAndEnv(e *env) {
	e.needPrograms("the working directory and environment programs see")
	id := e.create(sandbox.Spec{Env: []string{"SPEC_VAR=a", "OVER=spec"}}).ID
	tests := []struct {
		name string
		req  sandbox.ExecRequest
		want string
	}{
		{"default cwd is the workspace", sandbox.ExecRequest{Shell: "pwd"}, sandbox.WorkspaceMount + "\n"},
		{"cwd", sandbox.ExecRequest{Shell: "pwd", Cwd: "/tmp"}, "/tmp\n"},
		{"spec env", sandbox.ExecRequest{Shell: "echo $SPEC_VAR $OVER"}, "a spec\n"},
		{"request env overrides", sandbox.ExecRequest{Shell: "echo $SPEC_VAR $OVER $REQ_VAR", Env: []string{"REQ_VAR=b", "OVER=req"}}, "a req b\n"},
		{"argv sees env", sandbox.ExecRequest{Argv: []string{"printenv", "REQ_VAR"}, Env: []string{"REQ_VAR=c"}}, "c\n"},
		{"PATH is set", sandbox.ExecRequest{Shell: `case "$PATH" in *usr/bin*) echo ok;; esac`}, "ok\n"},
	}
	for _, tt := range tests {
		r := e.exec(id, tt.req)
		if string(r.Stdout) != tt.want || r.ExitCode != 0 {
			e.t.Errorf("%s: exit %d stdout %q stderr %q, want %q", tt.name, r.ExitCode, r.Stdout, r.Stderr, tt.want)
		}
	}
	// A missing cwd is the action's failure, not the backend's.
	if r, err := e.b.Exec(ctx(e.t), id, sandbox.ExecRequest{Shell: "pwd", Cwd: "/no/such/dir"}); err == nil && r.ExitCode == 0 {
		e.t.Errorf("cwd /no/such/dir: exit 0, want a failure")
	}
}

func testTimeout(e *env) {
	id := e.create(sandbox.Spec{}).ID
	timeout := func(e *env, shell string) {
		e.t.Helper()
		start := time.Now()
		r := e.exec(id, sandbox.ExecRequest{Shell: shell, Timeout: 300 * time.Millisecond})
		if !r.TimedOut || r.ExitCode != -1 {
			e.t.Fatalf("timed out %v exit %d, want true -1", r.TimedOut, r.ExitCode)
		}
		if el := time.Since(start); el > 10*time.Second || r.Duration < 300*time.Millisecond {
			e.t.Fatalf("took %v (Duration %v), want about 300ms", el, r.Duration)
		}
		// The sandbox still works.
		if r := e.exec(id, sandbox.ExecRequest{Shell: "true"}); r.ExitCode != 0 {
			e.t.Fatalf("after timeout: exit %d", r.ExitCode)
		}
	}
	e.step("action killed", false, func(e *env) { timeout(e, "sleep 60") })
	e.step("whole tree killed", true, func(e *env) {
		// The background sleep leaves the process group and the session:
		// only a kill of the whole tree reaches it.
		timeout(e, "setsid sleep 60 & echo $! > /workspace/bg; sleep 60")
		out := e.sh(id, `pid=$(cat /workspace/bg); if kill -0 "$pid" 2>/dev/null; then echo alive; else echo gone; fi`)
		if strings.TrimSpace(out) != "gone" {
			e.t.Fatalf("background process of a timed-out action: %s, want gone", out)
		}
	})
}
