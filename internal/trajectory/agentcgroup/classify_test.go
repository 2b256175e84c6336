package agentcgroup

import "testing"

func TestClassify(t *testing.T) {
	tests := []struct {
		name    string
		tool    string
		input   map[string]any
		class   string
		command string
	}{
		{"pytest", "Bash", map[string]any{"command": "cd /testbed && python -m pytest tests/test_x.py -q"}, ClassTest, "cd /testbed && python -m pytest tests/test_x.py -q"},
		{"tox", "Bash", map[string]any{"command": "tox -e py311"}, ClassTest, "tox -e py311"},
		{"pip install", "Bash", map[string]any{"command": "pip install -e ."}, ClassInstall, "pip install -e ."},
		{"apt-get install", "Bash", map[string]any{"command": "apt-get install -y libxml2"}, ClassInstall, "apt-get install -y libxml2"},
		{"npm install", "Bash", map[string]any{"command": "npm install"}, ClassInstall, "npm install"},
		{"make", "Bash", map[string]any{"command": "make -j4"}, ClassBuild, "make -j4"},
		{"python build", "Bash", map[string]any{"command": "python setup.py build_ext --inplace"}, ClassRun, "python setup.py build_ext --inplace"},
		{"git", "Bash", map[string]any{"command": "cd /testbed && git diff"}, ClassBash, "cd /testbed && git diff"},
		{"python script", "Bash", map[string]any{"command": "python3 reproduce.py"}, ClassRun, "python3 reproduce.py"},
		{"plain shell", "Bash", map[string]any{"command": "ls -la /testbed"}, ClassBash, "ls -la /testbed"},
		{"read", "Read", map[string]any{"file_path": "/a.py"}, ClassRead, "/a.py"},
		{"edit", "Edit", map[string]any{"file_path": "/a.py"}, ClassEdit, "/a.py"},
		{"write", "Write", map[string]any{"file_path": "/b.py", "content": "x"}, ClassEdit, "/b.py"},
		{"grep with path", "Grep", map[string]any{"pattern": "foo", "path": "src"}, ClassSearch, "foo src"},
		{"glob", "Glob", map[string]any{"pattern": "**/*.py"}, ClassSearch, "**/*.py"},
		{"web search", "WebSearch", map[string]any{"query": "numpy shape"}, "websearch", "numpy shape"},
		{"todo", "TodoWrite", map[string]any{"todos": []any{}}, "todowrite", "todowrite"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, cmd := Classify(tt.tool, tt.input)
			if c != tt.class || cmd != tt.command {
				t.Errorf("Classify(%s, %v) = %q, %q; want %q, %q", tt.tool, tt.input, c, cmd, tt.class, tt.command)
			}
		})
	}
}
