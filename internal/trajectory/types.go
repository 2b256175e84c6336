package trajectory

import "slices"

// Version is the trajectory format version this build reads and writes.
const Version = 1

// Workflow is one agent task: one JSONL line of a trajectory file.
type Workflow struct {
	Version int     `json:"version"`
	ID      string  `json:"id"`
	Arrival float64 `json:"arrival_s"`       // offset from the start of the replay, seconds
	Image   string  `json:"image,omitempty"` // base image; "" means the backend default
	Kind    string  `json:"kind,omitempty"`  // swe, science, rl, imported, ...
	// Task names the task the workflow runs when several workflows run
	// the same one (Replicate's copies); "" means its own ID (TaskOf).
	// Predictors are cross-fitted by task: a copy's measurements must not
	// train the model that predicts another copy of the same task.
	Task string `json:"task,omitempty"`
	// Workspace, when set, seeds each attempt's fresh workspace from a
	// host archive and says where else the sandbox shows it.
	Workspace *Workspace `json:"workspace,omitempty"`
	Env       []string   `json:"env,omitempty"`   // KEY=VALUE for every action
	Binds     []Bind     `json:"binds,omitempty"` // host directories shown read-only in the sandbox
	Actions   []Action   `json:"actions"`
}

// Workspace is how a workflow's workspace starts: the archive unpacked into
// it before the attempt's first sandbox starts.
type Workspace struct {
	// Archive is the absolute host path of a tar archive (gzip'd or not).
	Archive string `json:"archive"`
	// Strip drops this many leading path components of every entry (tar's
	// --strip-components); entries with no more are skipped.
	Strip int `json:"strip,omitempty"`
	// Mount is a second absolute path the workspace appears at in the
	// sandbox (e.g. /testbed, where the recorded agent worked); actions
	// then run there. "" keeps only the backend's workspace mount.
	Mount string `json:"mount,omitempty"`
}

// Bind shows the host directory Source at Target in the sandbox, read-only.
type Bind struct {
	Source string `json:"source"`
	Target string `json:"target"`
}

// Action is one tool call and the model wait before it.
type Action struct {
	Wait    float64 `json:"wait_s"`  // model wait before the action, seconds
	Class   string  `json:"class"`   // bash, read, edit, test, build, install, ...
	Command string  `json:"command"` // command text, used for prediction features
	// Exactly one of Run, Mem and Edit says how to execute the action.
	Run      string      `json:"run,omitempty"`  // a shell command run with /bin/sh -c
	Mem      *MemProfile `json:"mem,omitempty"`  // a memory curve run by `tenon tool mem`
	Edit     *FileEdit   `json:"edit,omitempty"` // a file edit applied by `tenon tool edit`
	Hints    Hints       `json:"hints,omitzero"`
	Recorded *Recorded   `json:"recorded,omitempty"`
}

// Hints are what the workflow declares about an action ahead of time.
type Hints struct {
	Background bool `json:"background,omitempty"` // leaves a background process running
}

// Recorded holds measurements of the action when it was recorded.
type Recorded struct {
	DurationS float64 `json:"duration_s"`
	AvgMiB    float64 `json:"avg_mib"`  // average memory above the level before the action
	PeakMiB   float64 `json:"peak_mib"` // peak memory above the level before the action
	// BeforeMiB is what the sandbox held just before the action (its whole
	// memory usage, the level AvgMiB and PeakMiB are measured above); 0:
	// not recorded.
	BeforeMiB float64 `json:"before_mib,omitempty"`
}

// FileEdit is an agent's file edit, applied in the sandbox's workspace by
// `tenon tool edit`: Old replaced by New (exactly once, or every occurrence
// with ReplaceAll; the edit fails when Old is missing, or occurs more than
// once without ReplaceAll), or with Write the file replaced by New.
type FileEdit struct {
	Path       string `json:"path"` // relative to the workspace, without ".."
	Old        string `json:"old,omitempty"`
	New        string `json:"new"`
	ReplaceAll bool   `json:"replace_all,omitempty"`
	Write      bool   `json:"write,omitempty"`
}

// MemProfile is the curve `tenon tool mem` reproduces: ramp to PeakMiB over
// RampS, hold for HoldS, drop to RetainMiB which stays until exit (RetainS = 0)
// or for RetainS seconds; optionally write FilesMiB of files into the workspace
// and leave a background process holding the retained memory after exit.
type MemProfile struct {
	PeakMiB    float64 `json:"peak_mib"`
	RampS      float64 `json:"ramp_s"`
	HoldS      float64 `json:"hold_s"`
	RetainMiB  float64 `json:"retain_mib,omitempty"`
	RetainS    float64 `json:"retain_s,omitempty"`
	FilesMiB   float64 `json:"files_mib,omitempty"`
	Background bool    `json:"background,omitempty"`
}

// TaskOf is the task w runs: w.Task, or w.ID when unset.
func TaskOf(w Workflow) string {
	if w.Task != "" {
		return w.Task
	}
	return w.ID
}

// Tasks returns the tasks of wfs (TaskOf), each once, sorted.
func Tasks(wfs []Workflow) []string {
	tasks := make([]string, 0, len(wfs))
	for _, w := range wfs {
		tasks = append(tasks, TaskOf(w))
	}
	slices.Sort(tasks)
	return slices.Compact(tasks)
}
