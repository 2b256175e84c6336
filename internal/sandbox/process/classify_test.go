package process

import (
	"errors"
	"testing"
)

func TestTrivial(t *testing.T) {
	sizes := map[string]int64{"small.txt": 100, "big.log": smallFile + 1, "edge": smallFile}
	size := func(name string) (int64, error) {
		n, ok := sizes[name]
		if !ok {
			return 0, errors.New("no such file")
		}
		return n, nil
	}
	sh := func(text string) []string { return []string{"/bin/sh", "-c", text} }
	tests := []struct {
		name string
		argv []string
		size sizeFunc
		want bool
	}{
		{"empty", nil, size, false},
		{"ls argv", []string{"/usr/bin/ls", "-la"}, size, true},
		{"ls recursive", []string{"ls", "-laR", "/"}, size, false},
		{"ls long recursive", sh("ls --recursive"), size, false},
		{"pwd", sh("pwd"), size, true},
		{"true", sh("true"), size, true},
		{"echo", sh("echo hello world"), size, true},
		{"echo quoted", sh(`echo "hello world" 'x y'`), size, true},
		{"echo variable", sh(`echo $HOME`), size, false},
		{"echo variable in quotes", sh(`echo "$HOME"`), size, false},
		{"single quotes keep dollar literal", sh(`echo '$HOME'`), size, true},
		{"cd and ls", sh("cd src && ls -l"), size, true},
		{"semicolons", sh("cd /tmp; pwd; ls"), size, true},
		{"trailing and", sh("cd /tmp &&"), size, false},
		{"leading operator", sh("; ls"), size, false},
		{"cat small", sh("cat small.txt"), size, true},
		{"cat at the limit", sh("cat edge"), size, true},
		{"cat big", sh("cat big.log"), size, false},
		{"cat missing", sh("cat nope"), size, false},
		{"cat two files", sh("cat small.txt edge"), size, false},
		{"cat stdin", sh("cat"), size, false},
		{"cat without size func", sh("cat small.txt"), nil, false},
		{"pipe", sh("ls | wc -l"), size, false},
		{"redirect", sh("echo x > f"), size, false},
		{"background", sh("true &"), size, false},
		{"or list", sh("true || ls"), size, false},
		{"substitution", sh("echo $(id)"), size, false},
		{"backticks", sh("echo `id`"), size, false},
		{"glob", sh("ls *.go"), size, false},
		{"env assignment", sh("FOO=1 ls"), size, false},
		{"unterminated quote", sh(`echo "abc`), size, false},
		{"heavy command", sh("python3 train.py"), size, false},
		{"heavy after trivial", sh("cd src && make"), size, false},
		{"bash -c", []string{"bash", "-c", "pwd"}, size, true},
		{"shell script file", []string{"sh", "script.sh"}, size, false},
		{"newline", sh("ls\nmake"), size, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := trivial(tt.argv, tt.size); got != tt.want {
				t.Errorf("trivial(%q) = %v, want %v", tt.argv, got, tt.want)
			}
		})
	}
}
