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
