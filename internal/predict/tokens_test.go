package predict

import (
	"slices"
	"testing"
)

func TestTokenize(t *testing.T) {
	tests := []struct {
		name, cmd string
		want      []string
	}{
		{"path shape", "cat src/foo/bar.py", []string{"prog:cat", "path:dir/dir/*.py"}},
		{"absolute dir", "ls /testbed/tests/", []string{"prog:ls", "path:/dir/dir/"}},
		{"subcommand and flags", "git diff --stat HEAD~1", []string{"prog:git", "sub:git diff", "flag:--stat", "word:head~1"}},
		{"python -m and pytest node", "cd /testbed && python3 -m pytest tests/test_x.py::TestA -x -q 2>&1 | tail -20",
			[]string{"prog:cd", "path:/name", "prog:python3", "flag:-m", "mod:pytest", "path:dir/*.py",
				"flag:-x", "flag:-q", "prog:tail", "num"}},
		{"assignments and wrappers", "PYTHONPATH=. timeout 60 /usr/bin/python run.py --n=3",
			[]string{"prog:python", "path:*.py", "flag:--n"}},
		{"quoted text stays whole", `grep -rn "def foo|bar" /testbed/src`,
			[]string{"prog:grep", "flag:-rn", "sub:grep def foo|bar", "path:/dir/name"}},
		{"pip install", "pip install -e .[test]", []string{"prog:pip", "sub:pip install", "flag:-e", "word:.[test]"}},
		{"file path only", "/testbed/src/nv_ingest/util/x.py", []string{"prog:x.py"}},
		{"empty", "  ", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Tokenize(tc.cmd); !slices.Equal(got, tc.want) {
				t.Errorf("Tokenize(%q)\n got %q\nwant %q", tc.cmd, got, tc.want)
			}
		})
	}
}

func TestSkeleton(t *testing.T) {
	tests := []struct{ name, cmd, want string }{
		{"pytest run", "cd /testbed && python3 -m pytest tests/test_x.py::TestA -x -q 2>&1 | tail -20",
			"prog:cd prog:python3 mod:pytest prog:tail"},
		{"other file, other flags, same skeleton", "cd /testbed && python3 -m pytest tests/b.py -k foo | tail -5",
			"prog:cd prog:python3 mod:pytest prog:tail"},
		{"subcommand", "pip install -e .[test]", "prog:pip sub:pip install"},
		{"bare tool name (no command text)", "bash", ""},
		{"empty", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Skeleton(tc.cmd); got != tc.want {
				t.Errorf("Skeleton(%q) = %q, want %q", tc.cmd, got, tc.want)
			}
		})
	}
}
