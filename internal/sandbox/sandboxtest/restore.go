package sandboxtest

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/tenon-dev/tenon/internal/sandbox"
)

// rootfsRestorer is what a backend implements to take part in the
// RootfsFrom case: it exposes a sandbox's writable layer as a host
// directory and starts a sandbox from a captured one.
type rootfsRestorer interface {
	WritableLayer(id string) (string, error)
	SupportsRootfsFrom() bool
}

// testRootfsFrom: a sandbox started with Spec.RootfsFrom set to a copy of
// another's writable layer sees what that one wrote outside its
// workspace, and the directory is consumed.
func testRootfsFrom(e *env) {
	rb, ok := e.b.(rootfsRestorer)
	if !ok || !rb.SupportsRootfsFrom() {
		e.t.Skipf("backend %s does not declare Spec.RootfsFrom support", e.b.Name())
	}
	src := e.create(sandbox.Spec{}).ID
	e.sh(src, "mkdir -p /opt/tool /var/lib/pkg && echo x > /opt/tool/x && echo y > /var/lib/pkg/y && "+
		"ln -s /opt/tool/x /var/lib/pkg/link && chmod 0750 /opt/tool/x && echo ws > /workspace/ws")
	want := e.sh(src, "cat /opt/tool/x /var/lib/pkg/link /var/lib/pkg/y && stat -c %a /opt/tool/x")
	layer, err := rb.WritableLayer(src)
	if err != nil {
		e.t.Fatalf("WritableLayer(%s): %v", src, err)
	}
	captured := filepath.Join(e.t.TempDir(), "layer")
	if out, err := exec.Command("cp", "-a", layer, captured).CombinedOutput(); err != nil {
		e.t.Fatalf("copying the writable layer: %v: %s", err, out)
	}
	if err := e.b.Destroy(ctx(e.t), src); err != nil {
		e.t.Fatalf("Destroy(%s): %v", src, err)
	}
	dst := e.create(sandbox.Spec{RootfsFrom: captured}).ID
	if got := e.sh(dst, "cat /opt/tool/x /var/lib/pkg/link /var/lib/pkg/y && stat -c %a /opt/tool/x"); got != want {
		e.t.Errorf("restored sandbox reads %q, want %q", got, want)
	}
	if r := e.exec(dst, sandbox.ExecRequest{Shell: "cat /workspace/ws"}); r.ExitCode == 0 {
		e.t.Errorf("the workspace came with the writable layer")
	}
	// Still writable, and the system directories still work.
	if got := e.sh(dst, "echo more >> /opt/tool/x && tail -1 /opt/tool/x && ls /usr/bin/env >/dev/null && echo ok"); got != "more\nok\n" {
		e.t.Errorf("restored sandbox: %q", got)
	}
	if _, err := os.Lstat(captured); !errors.Is(err, os.ErrNotExist) {
		e.t.Errorf("RootfsFrom %s: %v after Create, want it consumed", captured, err)
	}
}
