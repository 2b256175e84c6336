package sandboxtest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tenon-dev/tenon/internal/sandbox"
)

func testWorkspace(e *env) {
	e.needPrograms("files written through /workspace")
	ws := filepath.Join(e.t.TempDir(), "agent-ws")
	id := e.create(sandbox.Spec{Workspace: ws}).ID
	e.sh(id, "echo data > /workspace/f.txt && mkdir -p /workspace/sub && echo deep > /workspace/sub/g")
	if b, err := os.ReadFile(filepath.Join(ws, "f.txt")); err != nil || string(b) != "data\n" {
		e.t.Fatalf("host view of /workspace/f.txt: %q %v, want %q", b, err, "data\n")
	}
	if out := e.sh(id, "cat /workspace/f.txt /workspace/sub/g"); out != "data\ndeep\n" {
		e.t.Fatalf("second action reads %q, want %q", out, "data\ndeep\n")
	}
	if err := os.WriteFile(filepath.Join(ws, "host.txt"), []byte("from host\n"), 0o644); err != nil {
		e.t.Fatal(err)
	}
	if out := e.sh(id, "cat /workspace/host.txt"); out != "from host\n" {
		e.t.Fatalf("sandbox view of a host file: %q", out)
	}
}

func testWritableLayer(e *env) {
	e.needPrograms("files written outside the workspace")
	id := e.create(sandbox.Spec{}).ID
	marker := fmt.Sprintf("/root/tenon-sandboxtest-%d-%s", os.Getpid(), id)
	e.sh(id, "echo layer > "+marker+" && echo t > /tmp/t && mkdir -p /opt/tool && echo o > /opt/tool/o")
	if out := e.sh(id, "cat "+marker+" /tmp/t /opt/tool/o"); out != "layer\nt\no\n" {
		e.t.Fatalf("next action reads %q, want %q", out, "layer\nt\no\n")
	}
	if _, err := os.Lstat(marker); !errors.Is(err, os.ErrNotExist) {
		_ = os.Remove(marker)
		e.t.Fatalf("host %s: %v, want it absent (the sandbox must not write the host base)", marker, err)
	}
	// Another sandbox does not see it either.
	other := e.create(sandbox.Spec{}).ID
	r := e.exec(other, sandbox.ExecRequest{Shell: "cat " + marker})
	if r.ExitCode == 0 {
		e.t.Fatalf("sandbox %s sees %s of sandbox %s", other, marker, id)
	}
}

func testReadOnlyUsr(e *env) {
	e.needPrograms("a read-only /usr and /etc")
	id := e.create(sandbox.Spec{}).ID
	for _, dir := range []string{"/usr", "/usr/bin", "/etc"} {
		name := fmt.Sprintf("%s/tenon-sandboxtest-%d", dir, os.Getpid())
		if r := e.exec(id, sandbox.ExecRequest{Shell: "touch " + name}); r.ExitCode == 0 {
			e.t.Errorf("touch %s succeeded, want a read-only file system", name)
		}
		if _, err := os.Lstat(name); !errors.Is(err, os.ErrNotExist) {
			e.t.Errorf("host %s: %v, want absent", name, err)
			_ = os.Remove(name)
		}
	}
	// The system binaries work.
	if out := e.sh(id, "ls /usr/bin/env /bin/sh >/dev/null && echo ok"); out != "ok\n" {
		e.t.Errorf("system binaries: %q", out)
	}
}
