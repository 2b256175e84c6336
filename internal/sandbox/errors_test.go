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
