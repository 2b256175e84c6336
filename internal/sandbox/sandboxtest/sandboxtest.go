package sandboxtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/sandbox"
)

// opTimeout bounds every backend call of the suite, so a broken backend
// fails the test instead of hanging it.
const opTimeout = 30 * time.Second

var seq atomic.Int64

// Capabilities say what a backend under test lacks; a case, or a step of
// one, that needs what it lacks is skipped with a reason naming it, never
// passed. The zero value lacks nothing (the process and docker backends).
type Capabilities struct {
	// NoPrograms: actions do not run real programs (a POSIX shell,
	// coreutils), so their output, their effects on files, their memory and
	// the isolation they would observe are not real. Only the semantics
	// every backend shares are checked, with the commands each understands
	// ("true", "false", "exit N", "sleep S"): the lifecycle and its errors,
	// request validation, exit codes, timeouts and pause. The fake backend
	// sets it.
	NoPrograms bool
}

// env is what each contract test gets: the backend and helpers.
type env struct {
	t    *testing.T
	b    sandbox.Backend
	caps Capabilities
}

// Run runs the contract against backends made by newBackend (one backend
// for the whole suite) that lack nothing.
func Run(t *testing.T, newBackend func(t *testing.T) sandbox.Backend) {
	RunWith(t, Capabilities{}, newBackend)
}

// RunWith runs the contract against a backend with the given
// capabilities.
func RunWith(t *testing.T, caps Capabilities, newBackend func(t *testing.T) sandbox.Backend) {
	b := newBackend(t)
	tests := []struct {
		name string
		fn   func(e *env)
	}{
		{"Echo", testEcho},
		{"ExitCode", testExitCode},
		{"Stderr", testStderr},
		{"OutputCap", testOutputCap},
		{"CwdAndEnv", testCwdAndEnv},
		{"Timeout", testTimeout},
		{"Workspace", testWorkspace},
		{"WritableLayer", testWritableLayer},
		{"RootfsFrom", testRootfsFrom},
		{"PauseResume", testPauseResume},
		{"Stats", testStats},
		{"Network", testNetwork},
		{"ReadOnlyUsr", testReadOnlyUsr},
		{"PidNamespace", testPidNamespace},
		{"Destroy", testDestroy},
		{"InitDeath", testInitDeath},
		{"InvalidSpec", testInvalidSpec},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(&env{t: t, b: b, caps: caps}) })
	}
}

// needPrograms skips the test when the backend runs no real programs;
// what says what the test checks.
func (e *env) needPrograms(what string) {
	e.t.Helper()
	if e.caps.NoPrograms {
		e.t.Skipf("backend %s runs no real programs (sandboxtest.Capabilities.NoPrograms), which this needs: %s", e.b.Name(), what)
	}
}

// step runs fn as a subtest; with needsPrograms it skips on backends that
// run no real programs.
func (e *env) step(name string, needsPrograms bool, fn func(e *env)) {
	e.t.Run(name, func(t *testing.T) {
		sub := &env{t: t, b: e.b, caps: e.caps}
		if needsPrograms {
			sub.needPrograms(name)
		}
		fn(sub)
	})
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), opTimeout)
	t.Cleanup(cancel)
	return c
}

// create makes a sandbox with a fresh workspace (unless spec has one) and
// destroys it when the test ends.
func (e *env) create(spec sandbox.Spec) sandbox.Info {
	e.t.Helper()
	if spec.ID == "" {
		spec.ID = fmt.Sprintf("st-%d-%d", os.Getpid(), seq.Add(1))
	}
	if spec.Workspace == "" {
		spec.Workspace = filepath.Join(e.t.TempDir(), "ws")
	}
	info, err := e.b.Create(ctx(e.t), spec)
	if err != nil {
		e.t.Fatalf("Create(%s): %v", spec.ID, err)
	}
	e.t.Cleanup(func() {
		if err := e.b.Destroy(context.Background(), spec.ID); err != nil {
			e.t.Errorf("Destroy(%s): %v", spec.ID, err)
		}
	})
	if info.ID != spec.ID {
		e.t.Errorf("Info.ID = %q, want %q", info.ID, spec.ID)
	}
	return info
}

// exec runs req and fails the test on a backend error.
func (e *env) exec(id string, req sandbox.ExecRequest) sandbox.ExecResult {
	e.t.Helper()
	r, err := e.b.Exec(ctx(e.t), id, req)
	if err != nil {
		e.t.Fatalf("Exec(%s, %q%q): %v", id, req.Argv, req.Shell, err)
	}
	return r
}

// sh runs a shell command and requires exit status 0; it returns stdout.
func (e *env) sh(id, cmd string) string {
	e.t.Helper()
	r := e.exec(id, sandbox.ExecRequest{Shell: cmd, Timeout: opTimeout})
	if r.ExitCode != 0 {
		e.t.Fatalf("%q: exit %d, stderr %q", cmd, r.ExitCode, r.Stderr)
	}
	return string(r.Stdout)
}

// eventually polls cond every 10 ms until it holds or d passes.
func eventually(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}
