//go:build linux

package process

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/sandbox"
)

// run executes cmd in sandbox id and returns its result; it fails the test
// only when the backend fails.
func run(t *testing.T, b *Backend, id, cmd string) sandbox.ExecResult {
	t.Helper()
	r, err := b.Exec(liveCtx(t), id, sandbox.ExecRequest{Shell: cmd, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatalf("%q: %v", cmd, err)
	}
	return r
}

// Issue 22, finding 4: the host's /etc (shadow, private keys) was readable.
func TestHostileHostSecrets(t *testing.T) {
	b, _ := liveBackend(t, 1<<30)
	mustCreate(t, b, "secrets")
	for _, p := range []string{"/etc/shadow", "/etc/gshadow", "/etc/ssl/private", "/etc/ssh", "/etc/pip.conf", "/etc/gitconfig"} {
		if r := run(t, b, "secrets", "ls -d "+p); r.ExitCode == 0 {
			t.Errorf("%s is visible in the sandbox: %q", p, r.Stdout)
		}
	}
	if r := run(t, b, "secrets", "head /etc/shadow"); r.ExitCode == 0 {
		t.Errorf("head /etc/shadow succeeded: %q", r.Stdout)
	}
	if out := mustSh(t, b, "secrets", "cut -d: -f1 /etc/passwd | tr '\\n' ' '"); out != "root nobody " {
		t.Errorf("/etc/passwd users %q, want the generated root and nobody", out)
	}
	// The capability that let uid 0 read any file is gone.
	status := mustSh(t, b, "secrets", "grep CapEff /proc/self/status")
	f := strings.Fields(status)
	eff, err := strconv.ParseUint(f[len(f)-1], 16, 64)
	if err != nil {
		t.Fatalf("CapEff %q: %v", status, err)
	}
	const capDacOverride, capNetRaw = 1, 13
	for _, c := range []uint{capDacOverride, capNetRaw} {
		if eff&(1<<c) != 0 {
			t.Errorf("CapEff %#x has capability %d", eff, c)
		}
	}
}

// sandboxHas reports whether a sandbox finds the program name on its PATH
// (the host's system directories; the host's /usr/local/bin is not there).
func sandboxHas(name string) bool {
	for _, d := range []string{"/usr/sbin", "/usr/bin", "/sbin", "/bin"} {
		if fi, err := os.Stat(d + "/" + name); err == nil && fi.Mode().IsRegular() {
			return true
		}
	}
	return false
}

// The generated /etc still serves the tools agents run.
func TestCommonToolsRun(t *testing.T) {
	b, _ := liveBackend(t, 1<<30)
	mustCreate(t, b, "tools")
	tests := []struct {
		name, need, cmd, want string
	}{
		{"sh", "sh", "echo ok", "ok\n"},
		{"user name", "id", "id -un", "root\n"},
		{"hostname", "getent", "getent hosts tools | cut -f1 -d' '", "127.0.1.1\n"},
		{"alternatives", "awk", "echo a b | awk '{print $2}'", "b\n"},
		{"python3", "python3", "python3 -c 'import ssl, json, sqlite3, pwd; print(pwd.getpwuid(0).pw_name)'", "root\n"},
		{"pip", "pip3", "python3 -m pip --version >/dev/null && echo ok", "ok\n"},
		{"git", "git", "cd /workspace && git init -q r && cd r && echo x > f && git add f && " +
			"git -c user.email=a@b -c user.name=a commit -qm m && git log --format=%s", "m\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !sandboxHas(tt.need) {
				t.Skipf("the host has no /usr/bin/%s (nor /bin/%s)", tt.need, tt.need)
			}
			r := run(t, b, "tools", tt.cmd)
			if r.ExitCode != 0 || string(r.Stdout) != tt.want {
				t.Errorf("%q: exit %d, stdout %q, stderr %q; want %q", tt.cmd, r.ExitCode, r.Stdout, r.Stderr, tt.want)
			}
		})
	}
}

// A networked sandbox resolves names through the host's resolv.conf.
func TestResolvConfWithNetwork(t *testing.T) {
	host, err := os.ReadFile("/etc/resolv.conf")
	if err != nil {
		t.Skipf("the host has no /etc/resolv.conf: %v", err)
	}
	b, _ := liveBackend(t, 1<<30)
	for _, network := range []bool{false, true} {
		id := "resolv-" + strconv.FormatBool(network)
		if _, err := b.Create(liveCtx(t), sandbox.Spec{ID: id, Network: network, Workspace: t.TempDir()}); err != nil {
			t.Fatal(err)
		}
		got := mustSh(t, b, id, "cat /etc/resolv.conf")
		want := ""
		if network {
			want = string(host)
		}
		if got != want {
			t.Errorf("network=%v: /etc/resolv.conf %q, want %q", network, got, want)
		}
	}
}
