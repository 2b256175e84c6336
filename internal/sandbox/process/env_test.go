package process

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestMergeEnv(t *testing.T) {
	tests := []struct {
		name  string
		lists [][]string
		want  []string
	}{
		{"empty", nil, nil},
		{"concatenates", [][]string{{"A=1"}, {"B=2"}}, []string{"A=1", "B=2"}},
		{"later wins in place", [][]string{{"A=1", "B=2"}, {"A=3"}}, []string{"A=3", "B=2"}},
		{"value with equals", [][]string{{"A=x=y"}}, []string{"A=x=y"}},
		{"three lists", [][]string{{"P=a"}, {"P=b", "Q=1"}, {"Q=2"}}, []string{"P=b", "Q=2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mergeEnv(tt.lists...); !slices.Equal(got, tt.want) {
				t.Fatalf("mergeEnv = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestValidEnv(t *testing.T) {
	tests := []struct {
		name string
		env  []string
		want bool
	}{
		{"nil", nil, true},
		{"ok", []string{"A=1", "B="}, true},
		{"no equals", []string{"A"}, false},
		{"empty key", []string{"=1"}, false},
		{"nul", []string{"A=\x00"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := validEnv(tt.env); got != tt.want {
				t.Fatalf("validEnv(%q) = %v, want %v", tt.env, got, tt.want)
			}
		})
	}
}

func TestLookPath(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for _, d := range []string{a, b} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p string, mode os.FileMode) {
		if err := os.WriteFile(p, nil, mode); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(a, "noexec"), 0o644)
	write(filepath.Join(b, "noexec"), 0o755)
	write(filepath.Join(a, "tool"), 0o755)
	write(filepath.Join(b, "tool"), 0o755)
	env := []string{"PATH=" + a + ":" + b}
	tests := []struct {
		name, file, want string
		ok               bool
	}{
		{"first dir wins", "tool", filepath.Join(a, "tool"), true},
		{"skips non-executable", "noexec", filepath.Join(b, "noexec"), true},
		{"slash is taken as is", "./x/y", "./x/y", true},
		{"missing", "nope", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := lookPath(tt.file, env)
			if (err == nil) != tt.ok || got != tt.want {
				t.Fatalf("lookPath(%q) = %q, %v; want %q ok=%v", tt.file, got, err, tt.want, tt.ok)
			}
		})
	}
}

func TestCapture(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		limit     int
		want      string
		truncated bool
	}{
		{"under", "hello", 10, "hello", false},
		{"exact", "hello", 5, "hello", false},
		{"over", "hello world", 5, "hello", true},
		{"zero limit", "x", 0, "", true},
		{"large", strings.Repeat("a", 100000), 40000, strings.Repeat("a", 40000), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &capture{limit: tt.limit}
			c.readAll(strings.NewReader(tt.in))
			if string(c.buf) != tt.want || c.truncated != tt.truncated {
				t.Fatalf("got %d bytes truncated=%v, want %d truncated=%v", len(c.buf), c.truncated, len(tt.want), tt.truncated)
			}
		})
	}
}

// TestExecutorEnv: the executor's own settings are appended (so that they
// win) and the actions get the sandbox's environment back as it was.
func TestExecutorEnv(t *testing.T) {
	tests := []struct {
		name    string
		env     []string
		wantExe []string
	}{
		{"none set", []string{"PATH=/bin"},
			[]string{"PATH=/bin", "GODEBUG=asyncpreemptoff=1", "GLIBC_TUNABLES=glibc.pthread.rseq=0"}},
		{"both set", []string{"GODEBUG=gctrace=1", "GLIBC_TUNABLES=glibc.malloc.check=3", "A=b"},
			[]string{"GODEBUG=gctrace=1,asyncpreemptoff=1", "GLIBC_TUNABLES=glibc.malloc.check=3:glibc.pthread.rseq=0", "A=b"}},
		{"set empty", []string{"GODEBUG="},
			[]string{"GODEBUG=,asyncpreemptoff=1", "GLIBC_TUNABLES=glibc.pthread.rseq=0"}},
		{"the sandbox's own asks the same", []string{"GODEBUG=asyncpreemptoff=1"},
			[]string{"GODEBUG=asyncpreemptoff=1,asyncpreemptoff=1", "GLIBC_TUNABLES=glibc.pthread.rseq=0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exe := executorEnv(tt.env)
			if !slices.Equal(exe, tt.wantExe) {
				t.Errorf("executorEnv(%q) = %q, want %q", tt.env, exe, tt.wantExe)
			}
			if back := actionEnv(exe); !slices.Equal(back, tt.env) {
				t.Errorf("actionEnv(executorEnv(%q)) = %q, want it back", tt.env, back)
			}
		})
	}
}
