package docker

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/client"

	"github.com/tenon-dev/tenon/internal/sandbox"
)

func TestCapped(t *testing.T) {
	tests := []struct {
		name      string
		limit     int
		writes    []string
		want      string
		truncated bool
	}{
		{"under", 10, []string{"abc", "de"}, "abcde", false},
		{"exact", 5, []string{"abc", "de"}, "abcde", false},
		{"over in one write", 4, []string{"abcdef"}, "abcd", true},
		{"over across writes", 4, []string{"abc", "def", "g"}, "abcd", true},
		{"zero", 0, []string{"a"}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &capped{limit: tt.limit}
			for _, w := range tt.writes {
				if n, err := c.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write(%q) = %d, %v", w, n, err)
				}
			}
			if string(c.buf) != tt.want || c.truncated != tt.truncated {
				t.Fatalf("got %q truncated %v, want %q %v", c.buf, c.truncated, tt.want, tt.truncated)
			}
		})
	}
}

func TestExitCode(t *testing.T) {
	tests := []struct {
		name   string
		status int
		killed bool
		want   int
	}{
		{"success", 0, false, 0},
		{"failure", 3, false, 3},
		{"not found", 127, false, 127},
		{"128 is an exit status", 128, false, 128},
		{"SIGKILL", 137, false, -1},
		{"SIGTERM", 143, false, -1},
		{"killed on timeout", 0, true, -1},
		{"large status", 255, false, 255},
	}
	for _, tt := range tests {
		if got := exitCode(tt.status, tt.killed); got != tt.want {
			t.Errorf("%s: exitCode(%d, %v) = %d, want %d", tt.name, tt.status, tt.killed, got, tt.want)
		}
	}
}

func TestValidateExec(t *testing.T) {
	tests := []struct {
		name    string
		req     sandbox.ExecRequest
		cmd     []string
		cwd     string
		invalid bool
	}{
		{"shell", sandbox.ExecRequest{Shell: "echo hi"}, []string{"/bin/sh", "-c", "echo hi"}, "/workspace", false},
		{"argv through exec", sandbox.ExecRequest{Argv: []string{"ls", "-l"}, Cwd: "/tmp"},
			[]string{"/bin/sh", "-c", `exec "$@"`, "sh", "ls", "-l"}, "/tmp", false},
		{"empty", sandbox.ExecRequest{}, nil, "", true},
		{"both", sandbox.ExecRequest{Shell: "x", Argv: []string{"y"}}, nil, "", true},
		{"relative cwd", sandbox.ExecRequest{Shell: "x", Cwd: "rel"}, nil, "", true},
		{"bad env", sandbox.ExecRequest{Shell: "x", Env: []string{"NOEQ"}}, nil, "", true},
		{"empty env key", sandbox.ExecRequest{Shell: "x", Env: []string{"=v"}}, nil, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd, cwd, err := validateExec(tt.req)
			if tt.invalid {
				if !errors.Is(err, sandbox.ErrInvalidSpec) {
					t.Fatalf("err = %v, want ErrInvalidSpec", err)
				}
				return
			}
			if err != nil || !slices.Equal(cmd, tt.cmd) || cwd != tt.cwd {
				t.Fatalf("got %q %q %v, want %q %q", cmd, cwd, err, tt.cmd, tt.cwd)
			}
		})
	}
}

func TestValidateSpec(t *testing.T) {
	tests := []struct {
		name string
		spec sandbox.Spec
		ok   bool
	}{
		{"minimal", sandbox.Spec{ID: "a"}, true},
		{"workspace", sandbox.Spec{ID: "a", Workspace: "/tmp/ws", Env: []string{"A=1"}}, true},
		{"bad id", sandbox.Spec{ID: "a/b"}, false},
		{"relative workspace", sandbox.Spec{ID: "a", Workspace: "ws"}, false},
		{"bad env", sandbox.Spec{ID: "a", Env: []string{"A"}}, false},
		{"rootfs-from", sandbox.Spec{ID: "a", RootfsFrom: "/tmp/layer"}, true},
		{"relative rootfs-from", sandbox.Spec{ID: "a", RootfsFrom: "layer"}, false},
		{"bind", sandbox.Spec{ID: "a", Binds: []sandbox.Bind{{Source: "/ws", Target: "/testbed"}}}, true},
		{"bind into /etc", sandbox.Spec{ID: "a", Binds: []sandbox.Bind{{Source: "/ws", Target: "/etc/x"}}}, false},
	}
	for _, tt := range tests {
		if err := validateSpec(tt.spec); (err == nil) != tt.ok || (err != nil && !errors.Is(err, sandbox.ErrInvalidSpec)) {
			t.Errorf("%s: validateSpec = %v, want ok=%v", tt.name, err, tt.ok)
		}
	}
}

func TestMountsCarryBinds(t *testing.T) {
	var b Backend
	ms := b.mounts(sandbox.Spec{Workspace: "/w", Binds: []sandbox.Bind{
		{Source: "/w", Target: "/testbed"}, {Source: "/lib", Target: "/opt/lib", ReadOnly: true}}}, false)
	want := []mount.Mount{
		{Type: mount.TypeBind, Source: "/w", Target: sandbox.WorkspaceMount},
		{Type: mount.TypeBind, Source: "/w", Target: "/testbed"},
		{Type: mount.TypeBind, Source: "/lib", Target: "/opt/lib", ReadOnly: true},
	}
	if !reflect.DeepEqual(ms, want) {
		t.Errorf("mounts = %+v\nwant %+v", ms, want)
	}
}

func TestDaemonDown(t *testing.T) {
	sock := t.TempDir() + "/no-docker.sock"
	cli, err := client.NewClientWithOpts(client.WithHost("unix://"+sock), client.WithAPIVersionNegotiation())
	if err != nil {
		t.Fatal(err)
	}
	_, err = New(context.Background(), Config{Client: cli})
	if !errors.Is(err, ErrDaemonUnreachable) {
		t.Fatalf("New: %v, want ErrDaemonUnreachable", err)
	}
	for _, want := range []string{"cannot reach dockerd at " + sock, "dockerd &", "systemctl start docker"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

// TestCapAdd: the engine gets sandbox.Capabilities without the CAP_
// prefix (engines before 20.10 add it again), and a fresh slice.
func TestCapAdd(t *testing.T) {
	got := capAdd()
	want := sandbox.Capabilities()
	if len(got) != len(want) {
		t.Fatalf("capAdd %v, want the %d of sandbox.Capabilities", got, len(want))
	}
	for i, c := range got {
		if "CAP_"+c != want[i] {
			t.Errorf("capAdd[%d] = %q, want %q without its prefix", i, c, want[i])
		}
	}
	got[0] = "SYS_ADMIN"
	if slices.Contains(sandbox.Capabilities(), "SYS_ADMIN") || slices.Contains(capAdd(), "SYS_ADMIN") {
		t.Error("changing a returned slice changed the capabilities")
	}
}
