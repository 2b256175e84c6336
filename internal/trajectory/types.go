package trajectory

// Version is the trajectory format version this build reads and writes.
const Version = 1

// Workflow is one agent task: one JSONL line of a trajectory file.
type Workflow struct {
	Version int      `json:"version"`
	ID      string   `json:"id"`
	Arrival float64  `json:"arrival_s"`       // offset from the start of the replay, seconds
	Image   string   `json:"image,omitempty"` // base image; "" means the backend default
	Kind    string   `json:"kind,omitempty"`  // swe, science, rl, imported, ...
	Actions []Action `json:"actions"`
}

// Action is one tool call and the model wait before it.
type Action struct {
	Wait    float64 `json:"wait_s"`  // model wait before the action, seconds
	Class   string  `json:"class"`   // bash, read, edit, test, build, install, ...
	Command string  `json:"command"` // command text, used for prediction features
	// Exactly one of Run and Mem says how to execute the action.
	Run      string      `json:"run,omitempty"` // a shell command run with /bin/sh -c
	Mem      *MemProfile `json:"mem,omitempty"` // a memory curve run by `tenon tool mem`
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
