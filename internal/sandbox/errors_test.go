package sandbox

import (
	"errors"
	"strings"
	"testing"
)

func TestValidateID(t *testing.T) {
	tests := []struct {
		name string
		id   string
		ok   bool
	}{
		{"simple", "sb-1", true},
		{"dots and underscores", "a.b_c", true},
		{"max length", strings.Repeat("a", 64), true},
		{"empty", "", false},
		{"too long", strings.Repeat("a", 65), false},
		{"slash", "a/b", false},
		{"dot", ".", false},
		{"dotdot", "..", false},
		{"traversal", "../x", false},
		{"space", "a b", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateID(tt.id)
			if tt.ok && err != nil {
				t.Fatalf("ValidateID(%q) = %v, want nil", tt.id, err)
			}
			if !tt.ok && !errors.Is(err, ErrInvalidSpec) {
				t.Fatalf("ValidateID(%q) = %v, want ErrInvalidSpec", tt.id, err)
			}
		})
	}
}

func TestValidateExec(t *testing.T) {
	tests := []struct {
		name string
		req  ExecRequest
		ok   bool
	}{
		{"argv", ExecRequest{Argv: []string{"true"}}, true},
		{"shell with cwd and env", ExecRequest{Shell: "pwd", Cwd: "/tmp", Env: []string{"A=1", "B="}}, true},
		{"empty", ExecRequest{}, false},
		{"both", ExecRequest{Argv: []string{"true"}, Shell: "true"}, false},
		{"relative cwd", ExecRequest{Shell: "pwd", Cwd: "relative"}, false},
		{"env without =", ExecRequest{Shell: "true", Env: []string{"NOEQUALS"}}, false},
		{"env without key", ExecRequest{Shell: "true", Env: []string{"=x"}}, false},
		{"env with NUL", ExecRequest{Shell: "true", Env: []string{"A=x\x00y"}}, false},
		{"negative timeout", ExecRequest{Shell: "true", Timeout: -1}, false},
		{"negative output limit", ExecRequest{Shell: "true", OutputLimit: -1}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateExec(tt.req)
			if tt.ok != (err == nil) || !tt.ok && !errors.Is(err, ErrInvalidSpec) {
				t.Fatalf("ValidateExec(%+v) = %v, want ok %v (else ErrInvalidSpec)", tt.req, err, tt.ok)
			}
		})
	}
}

func TestValidateBinds(t *testing.T) {
	tests := []struct {
		name  string
		binds []Bind
		ok    bool
	}{
		{"none", nil, true},
		{"workspace alias and a read-only library", []Bind{{Source: "/w/ws", Target: "/testbed"}, {Source: "/srv/lib", Target: "/opt/lib", ReadOnly: true}}, true},
		{"relative source", []Bind{{Source: "ws", Target: "/testbed"}}, false},
		{"relative target", []Bind{{Source: "/ws", Target: "testbed"}}, false},
		{"unclean target", []Bind{{Source: "/ws", Target: "/opt/../etc"}}, false},
		{"root", []Bind{{Source: "/ws", Target: "/"}}, false},
		{"over /etc", []Bind{{Source: "/ws", Target: "/etc"}}, false},
		{"below /usr", []Bind{{Source: "/ws", Target: "/usr/local/bin"}}, false},
		{"below the workspace", []Bind{{Source: "/ws", Target: "/workspace/x"}}, false},
		{"a prefix is not a parent", []Bind{{Source: "/ws", Target: "/usrx"}}, true},
		{"twice", []Bind{{Source: "/a", Target: "/t"}, {Source: "/b", Target: "/t"}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateBinds(tt.binds)
			if (err == nil) != tt.ok {
				t.Fatalf("ValidateBinds = %v, want ok %v", err, tt.ok)
			}
			if err != nil && !errors.Is(err, ErrInvalidSpec) {
				t.Errorf("error %v does not wrap ErrInvalidSpec", err)
			}
		})
	}
}
