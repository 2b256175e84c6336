package api_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPythonExample runs examples/python/example.py (which uses
// clients/python/tenon_client.py) against a live daemon.
func TestPythonExample(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	d := startDaemon(t, daemonOpts{})
	script, err := filepath.Abs("../../examples/python/example.py")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(py, script, d.socket).CombinedOutput()
	if err != nil {
		t.Fatalf("example.py: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "OK") {
		t.Errorf("example.py output lacks OK:\n%s", out)
	}
}

// TestPythonClientTCP checks the Python client's TCP mode: the token is
// sent, and a wrong one is refused with 401.
func TestPythonClientTCP(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	d := startDaemon(t, daemonOpts{token: "tok-123"})
	ln := listenTCP(t)
	go d.srv.Serve(ln)
	dir, err := filepath.Abs("../../clients/python")
	if err != nil {
		t.Fatal(err)
	}
	script := `
import sys
sys.path.insert(0, sys.argv[1])
from tenon_client import TenonClient, TenonEnvironment, TenonError
env = TenonEnvironment(address=sys.argv[2], token="tok-123")
r = env.execute("exit 4", timeout=5)
assert r == {"output": "", "returncode": 4}, r
r = env.execute({"command": "oom"})  # the fake backend's OOM kill
assert r["returncode"] == -1 and "out of memory" in r["exception_info"], r
assert r["extra"]["exception_type"] == "TenonOOMKilled", r
env.cleanup()
try:
    TenonClient(address=sys.argv[2], token="wrong").status()
    raise SystemExit("wrong token accepted")
except TenonError as e:
    assert e.status == 401, e
print("TCP OK")
`
	out, err := exec.Command(py, "-c", script, dir, ln.Addr().String()).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "TCP OK") {
		t.Fatalf("python TCP client: %v\n%s", err, out)
	}
}

// TestPythonClientUnit runs the Python client's own unit tests
// (clients/python/test_tenon_client.py, a fake daemon, no tenon needed).
func TestPythonClientUnit(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	cmd := exec.Command(py, "-m", "unittest", "-v", "test_tenon_client")
	cmd.Dir = "../../clients/python"
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("python3 -m unittest: %v\n%s", err, out)
	}
}
