//go:build linux

package process

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tenon-dev/tenon/internal/sandbox"
)

// TestBinds: the workspace shown a second time, read-write, at /testbed,
// and a library directory read-only; neither appears in the host's mount
// table, and a file source is refused.
func TestBinds(t *testing.T) {
	b, _ := liveBackend(t, 1<<30)
	dir := t.TempDir()
	ws, lib := filepath.Join(dir, "ws"), filepath.Join(dir, "lib")
	for _, d := range []string{ws, lib} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(lib, "mod.py"), []byte("x = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := b.Create(liveCtx(t), sandbox.Spec{ID: "binds", Workspace: ws, Binds: []sandbox.Bind{
		{Source: ws, Target: "/testbed"},
		{Source: lib, Target: "/opt/pylib", ReadOnly: true},
	}})
	if err != nil {
		t.Fatal(err)
	}
	mustSh(t, b, "binds", "echo hi > /testbed/a && cd /testbed && pwd > b")
	if got, err := os.ReadFile(filepath.Join(ws, "b")); err != nil || string(got) != "/testbed\n" {
		t.Errorf("pwd in /testbed wrote %q (%v) to the workspace", got, err)
	}
	if got := mustSh(t, b, "binds", "cat /workspace/a /opt/pylib/mod.py"); got != "hi\nx = 1\n" {
		t.Errorf("through the binds: %q", got)
	}
	r, err := b.Exec(liveCtx(t), "binds", sandbox.ExecRequest{Shell: "echo y > /opt/pylib/new"})
	if err != nil || r.ExitCode == 0 {
		t.Errorf("write to the read-only bind: exit %d, %v; want a failure", r.ExitCode, err)
	}
	if _, err := os.Stat(filepath.Join(lib, "new")); err == nil {
		t.Error("a write through the read-only bind reached the host")
	}
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(mi), " /testbed ") || strings.Contains(string(mi), "/opt/pylib") {
		t.Error("a bind leaked into the host's mount namespace")
	}

	file := filepath.Join(lib, "mod.py")
	_, err = b.Create(liveCtx(t), sandbox.Spec{ID: "bind-file", Workspace: filepath.Join(dir, "ws2"),
		Binds: []sandbox.Bind{{Source: file, Target: "/opt/x"}}})
	if !errors.Is(err, sandbox.ErrInvalidSpec) {
		t.Errorf("a file as bind source: %v, want ErrInvalidSpec", err)
	}
	_, err = b.Create(liveCtx(t), sandbox.Spec{ID: "bind-etc", Workspace: filepath.Join(dir, "ws3"),
		Binds: []sandbox.Bind{{Source: lib, Target: "/etc/x"}}})
	if !errors.Is(err, sandbox.ErrInvalidSpec) {
		t.Errorf("a bind into /etc: %v, want ErrInvalidSpec", err)
	}
}
