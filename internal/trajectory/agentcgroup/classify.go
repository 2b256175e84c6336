package agentcgroup

import (
	"regexp"
	"strings"
)

// Action classes the importer assigns. Tools without a rule get their name lowercased.
const (
	ClassTest    = "test"
	ClassInstall = "install"
	ClassBuild   = "build"
	ClassRun     = "run"
	ClassBash    = "bash"
	ClassRead    = "read"
	ClassEdit    = "edit"
	ClassSearch  = "search"
)

// bashRules are tried in order on the lowercased command; the first match wins.
var bashRules = []struct {
	class string
	re    *regexp.Regexp
}{
	{ClassTest, regexp.MustCompile(`\b(pytest|py\.test|tox|nox|nosetests|unittest)\b|\b(go|cargo|npm|yarn|make) test\b`)},
	{ClassInstall, regexp.MustCompile(`\b(pip3?|uv pip|conda|mamba|apt|apt-get|npm|yarn|poetry|gem|cargo) (install|add|sync)\b|\bsetup\.py (develop|install)\b`)},
	{ClassBuild, regexp.MustCompile(`\b(make|cmake|ninja|gcc|g\+\+|cc|cargo build|go build|tsc|compile(all)?|build)\b`)},
	{ClassBash, regexp.MustCompile(`^\s*(cd [^&;]*(&&|;)\s*)?git\b`)},
	{ClassRun, regexp.MustCompile(`\b(python[0-9.]*|node|ruby|perl|java)\b`)},
}

// ClassifyCommand maps a Bash command to a class: test (pytest, tox, ...),
// install (pip/apt/npm/conda install, setup.py develop), build (make, cmake,
// compilers, "build"), bash for git commands, run (python, node, ...), and
// bash for everything else.
func ClassifyCommand(cmd string) string {
	c := strings.ToLower(cmd)
	for _, r := range bashRules {
		if r.re.MatchString(c) {
			return r.class
		}
	}
	return ClassBash
}

// Classify returns the class and command text of a tool call: Bash is
// classified by its command; Read is read; Edit, MultiEdit, Write and
// NotebookEdit are edit; Grep and Glob are search; any other tool is its
// name lowercased. The command is input.command for Bash, the file path for
// file tools, the pattern (and path) for searches, the query or URL for web
// tools, the description for Task, else the tool name.
func Classify(tool string, input map[string]any) (class, command string) {
	s := func(k string) string { v, _ := input[k].(string); return v }
	switch tool {
	case "Bash":
		return ClassifyCommand(s("command")), s("command")
	case "Read":
		return ClassRead, s("file_path")
	case "Edit", "MultiEdit", "Write":
		return ClassEdit, s("file_path")
	case "NotebookEdit":
		return ClassEdit, s("notebook_path")
	case "Grep", "Glob":
		cmd := s("pattern")
		if p := s("path"); p != "" {
			cmd += " " + p
		}
		return ClassSearch, cmd
	}
	class = strings.ToLower(tool)
	for _, k := range []string{"query", "url", "description", "command"} {
		if v := s(k); v != "" {
			return class, v
		}
	}
	return class, class
}
