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

// ClassUnknown is the class of a call that names no tool.
const ClassUnknown = "unknown"

// knownTools are the Claude Code tools the importer expects; any other
// tool is imported under its lowercased name with WarnUnknownTool.
var knownTools = map[string]bool{
	"Bash": true, "BashOutput": true, "KillShell": true, "KillBash": true,
	"Read": true, "Edit": true, "MultiEdit": true, "Write": true, "NotebookEdit": true, "NotebookRead": true,
	"Grep": true, "Glob": true, "LS": true,
	"Task": true, "TaskOutput": true, "TodoWrite": true, "ExitPlanMode": true,
	"WebSearch": true, "WebFetch": true,
}

func knownTool(tool string) bool { return knownTools[tool] }

// carriesCommand are the tools whose input names what they act on
// (commandText); a call of one without it, or of any tool without an
// input, is counted under WarnNoCommand.
var carriesCommand = map[string]bool{
	"Bash": true, "Read": true, "Edit": true, "MultiEdit": true, "Write": true, "NotebookEdit": true,
	"Grep": true, "Glob": true, "Task": true, "WebSearch": true, "WebFetch": true,
}

// Classify returns the class and command text of a tool call: Bash is
// classified by its command; Read is read; Edit, MultiEdit, Write and
// NotebookEdit are edit; Grep and Glob are search; any other tool is its
// name lowercased (unknown when the call names no tool). The command is
// commandText, or the class when the call carries none (the older
// AgentCgroup layout records no input).
func Classify(tool string, input map[string]any) (class, command string) {
	command = commandText(tool, input)
	switch tool {
	case "Bash":
		class = ClassifyCommand(command)
	case "Read":
		class = ClassRead
	case "Edit", "MultiEdit", "Write", "NotebookEdit":
		class = ClassEdit
	case "Grep", "Glob":
		class = ClassSearch
	case "":
		class = ClassUnknown
	default:
		class = strings.ToLower(tool)
	}
	if command == "" {
		command = class
	}
	return class, command
}

// commandText is what the agent asked the tool for: input.command for
// Bash, the file path for file tools, the pattern (and path) for searches,
// the query or URL for web tools, the description for Task; "" when the
// input has none of these.
func commandText(tool string, input map[string]any) string {
	s := func(k string) string { v, _ := input[k].(string); return v }
	switch tool {
	case "Bash":
		return s("command")
	case "Read", "Edit", "MultiEdit", "Write":
		return s("file_path")
	case "NotebookEdit":
		return s("notebook_path")
	case "Grep", "Glob":
		cmd := s("pattern")
		if p := s("path"); p != "" && cmd != "" {
			cmd += " " + p
		}
		return cmd
	}
	for _, k := range []string{"query", "url", "description", "command"} {
		if v := s(k); v != "" {
			return v
		}
	}
	return ""
}
