package realtools

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/trajectory/agentcgroup"
)

// Where the workflows show things in the sandbox, and the agent's limit.
const (
	// Mount is where the recorded agent's repository was, and where the
	// workspace appears again.
	Mount = "/testbed"
	// PylibTarget is where the pylib directory appears (read-only).
	PylibTarget = "/opt/tenon-pylib"
	// ToolLimitS is the agent's Bash tool limit (Claude Code's default,
	// 2 minutes); a command still running then is killed, exit 124.
	ToolLimitS = 120
	// Kind is the workflows' kind.
	Kind = "real"
)

// Call is one entry of tool_calls.json, as far as the conversion needs it.
type Call struct {
	Tool  string         `json:"tool"`
	Input map[string]any `json:"input"`
	// ResultPreview is a string for most tools (a list of parts for Task).
	ResultPreview json.RawMessage `json:"result_preview"`
}

// Refused reports whether the agent's tool refused the call (its result
// is a tool_use_error: a file not read first, a string not found): it
// changed nothing.
func (c Call) Refused() bool {
	var s string
	_ = json.Unmarshal(c.ResultPreview, &s)
	return strings.HasPrefix(strings.TrimSpace(s), "<tool_use_error>")
}

// Paths are the host paths a workflow names: its archive and, when the
// repository's env uses <pylib>, the pylib directory. Both absolute.
type Paths struct {
	Archive, Pylib string
}

// Convert makes the workflow of repo from its run's calls (tool_calls.json
// in file order) and the same run as agentcgroup imported it (rec, one
// action per call: the timeline and measurements). See the package doc.
func Convert(repo Repo, calls []Call, rec trajectory.Workflow, p Paths) (trajectory.Workflow, error) {
	if len(rec.Actions) != len(calls) {
		return trajectory.Workflow{}, fmt.Errorf("task %s: the trace import kept %d of %d calls; the run indices need all of them",
			repo.Task, len(rec.Actions), len(calls))
	}
	w := trajectory.Workflow{
		Version: trajectory.Version, ID: repo.Task, Kind: Kind,
		Workspace: &trajectory.Workspace{Archive: p.Archive, Strip: 1, Mount: Mount},
	}
	env, usesPylib := repoEnv(repo)
	w.Env = env
	if usesPylib {
		w.Binds = []trajectory.Bind{{Source: p.Pylib, Target: PylibTarget}}
	}
	if len(repo.Setup) > 0 {
		cmd, err := SetupCommand(repo.Setup, Mount)
		if err != nil {
			return trajectory.Workflow{}, err
		}
		w.Actions = append(w.Actions, trajectory.Action{Class: agentcgroup.ClassInstall, Command: cmd, Run: BashRun(cmd)})
	}
	for _, i := range repo.Run {
		if i >= len(calls) || calls[i].Tool != "Bash" {
			return trajectory.Workflow{}, fmt.Errorf("%w: repo %s: run index %d is not a Bash call of %s", ErrManifest, repo.Name, i, repo.Task)
		}
	}
	figure := repo.FigureMiB()
	var wait float64 // model time since the last action kept, skipped calls included
	for i, c := range calls {
		ra := rec.Actions[i]
		wait += ra.Wait
		a, keep, err := action(repo, i, c)
		if err != nil {
			return trajectory.Workflow{}, err
		}
		if !keep {
			if ra.Recorded != nil {
				wait += ra.Recorded.DurationS
			}
			continue
		}
		a.Wait = math.Round(wait*1000) / 1000
		wait = 0
		if r := ra.Recorded; r != nil {
			cp := *r
			if figure > 0 {
				cp.PeakMiB, cp.AvgMiB = min(cp.PeakMiB, figure), min(cp.AvgMiB, figure)
			}
			a.Recorded = &cp
		}
		w.Actions = append(w.Actions, a)
	}
	if err := w.Validate(); err != nil {
		return trajectory.Workflow{}, fmt.Errorf("task %s: %w", repo.Task, err)
	}
	return w, nil
}

// action converts call i; keep is false for a call the replay skips.
func action(repo Repo, i int, c Call) (trajectory.Action, bool, error) {
	switch c.Tool {
	case "Edit", "Write":
		if c.Refused() {
			return trajectory.Action{}, false, nil
		}
		file, _ := c.Input["file_path"].(string)
		rel, err := workspacePath(file)
		if err != nil {
			return trajectory.Action{}, false, fmt.Errorf("task %s: call %d (%s): %w", repo.Task, i, c.Tool, err)
		}
		e := &trajectory.FileEdit{Path: rel}
		if c.Tool == "Write" {
			e.New, _ = c.Input["content"].(string)
			e.Write = true
		} else {
			e.Old, _ = c.Input["old_string"].(string)
			e.New, _ = c.Input["new_string"].(string)
			e.ReplaceAll, _ = c.Input["replace_all"].(bool)
		}
		return trajectory.Action{Class: agentcgroup.ClassEdit, Command: file, Edit: e}, true, nil
	case "Bash":
		if !slices.Contains(repo.Run, i) {
			return trajectory.Action{}, false, nil
		}
		raw, _ := c.Input["command"].(string)
		cmd, err := repo.Substitute(raw)
		if err != nil {
			return trajectory.Action{}, false, err
		}
		if strings.TrimSpace(cmd) == "" {
			return trajectory.Action{}, false, fmt.Errorf("%w: task %s: call %d has no command", ErrManifest, repo.Task, i)
		}
		return trajectory.Action{Class: agentcgroup.ClassifyCommand(cmd), Command: cmd, Run: BashRun(cmd)}, true, nil
	}
	return trajectory.Action{}, false, nil
}

// workspacePath maps an agent's absolute path under Mount to one relative
// to the workspace, refusing any other path and any that climbs out.
func workspacePath(file string) (string, error) {
	rel, ok := strings.CutPrefix(file, Mount+"/")
	if !ok {
		return "", fmt.Errorf("path %q is not under %s", file, Mount)
	}
	if err := trajectory.CheckRelPath(rel); err != nil {
		return "", fmt.Errorf("path %q: %w", file, err)
	}
	return rel, nil
}

// repoEnv is the repository's env as KEY=VALUE, sorted, with <pylib>
// resolved; usesPylib says whether any value names it.
func repoEnv(repo Repo) (env []string, usesPylib bool) {
	for k, v := range repo.Env {
		if strings.Contains(v, "<pylib>") {
			usesPylib = true
			v = strings.ReplaceAll(v, "<pylib>", PylibTarget)
		}
		env = append(env, k+"="+v)
	}
	slices.Sort(env)
	return env, usesPylib
}

// BashRun is the shell line that runs cmd as the agent's tool did: under
// bash -c, killed (with its process group) after ToolLimitS seconds.
func BashRun(cmd string) string {
	return fmt.Sprintf("exec timeout -k 5 %d bash -c %s", ToolLimitS, shellQuote(cmd))
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
