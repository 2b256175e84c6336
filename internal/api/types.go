package api

import "time"

// CreateAgentRequest is the body of POST /v1/agents.
type CreateAgentRequest struct {
	// Backend names the sandbox backend; "" is the server's default.
	Backend string `json:"backend,omitempty"`
	// Image is the base image; "" or "host" is the host base.
	Image string `json:"image,omitempty"`
	// Files seeds the workspace: relative path -> content.
	Files map[string]string `json:"files,omitempty"`
	// Tar seeds the workspace with a tar archive (base64 in JSON); only
	// regular files and directories are extracted.
	Tar []byte `json:"tar,omitempty"`
	// Env is KEY=VALUE added to every action.
	Env    []string          `json:"env,omitempty"`
	Labels map[string]string `json:"labels,omitempty"`
}

// CreateAgentResponse is the answer to POST /v1/agents.
type CreateAgentResponse struct {
	ID string `json:"id"`
}

// Agent states reported by the API.
const (
	StateQueued  = "queued"  // waiting for the policy to let the agent start (AgentReady)
	StateIdle    = "idle"    // admitted, no action running, no model wait announced
	StateRunning = "running" // an action executes or waits for admission
	StateModel   = "model"   // a model wait was announced or is being proxied
)

// Residency of an agent's sandbox as reported by the API.
const (
	ResidencyResident = "resident"  // the sandbox is live
	ResidencyPagedOut = "paged_out" // live, frozen, its memory paged out to compressed swap
	ResidencyAbsent   = "absent"    // none: never created, torn down (rematerialized before the next action) or lost
)

// Agent describes one logical agent.
type Agent struct {
	ID        string            `json:"id"`
	Backend   string            `json:"backend"`
	Image     string            `json:"image,omitempty"`
	Env       []string          `json:"env,omitempty"`
	Labels    map[string]string `json:"labels,omitempty"`
	Created   time.Time         `json:"created"`
	State     string            `json:"state"`
	Sandbox   string            `json:"sandbox,omitempty"` // "" when absent
	Residency string            `json:"residency"`         // ResidencyResident, ResidencyPagedOut or ResidencyAbsent
	Actions   int               `json:"actions"`           // actions run so far
	Queued    int               `json:"queued"`            // actions waiting (0 or more)
	MemBytes  int64             `json:"mem_bytes"`         // sandbox memory, 0 when absent
	Workspace string            `json:"workspace"`         // host directory of the workspace
	// PredictedWaitS is the model wait the daemon expects of the agent, in
	// seconds: learned from its waits, else the average over all agents,
	// 0 before any wait was seen. Residency weighs it.
	PredictedWaitS float64 `json:"predicted_wait_s"`
}

// ExecRequest is the body of POST /v1/agents/{id}/exec.
type ExecRequest struct {
	// Command is a shell command line run with /bin/sh -c.
	Command string   `json:"command"`
	Cwd     string   `json:"cwd,omitempty"`
	Env     []string `json:"env,omitempty"`
	// TimeoutS is the action timeout in seconds; 0 means the server default.
	TimeoutS float64 `json:"timeout_s,omitempty"`
	// Class is the action class (bash, test, build, ...) for prediction.
	Class string `json:"class,omitempty"`
	// MemHintBytes is the caller's guess of the action's peak memory.
	MemHintBytes int64 `json:"mem_hint_bytes,omitempty"`
	// Background keeps the processes the action leaves running (a server
	// started with &) alive after it returns; without it the sandbox kills
	// them when the action ends. A command that visibly starts one (&,
	// nohup, setsid, a server) counts as background without the flag.
	Background bool `json:"background,omitempty"`
}

// ExecResponse is what an action did.
type ExecResponse struct {
	ExitCode int    `json:"exit_code"`
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr"`
	// StdoutB64 and StderrB64 hold the exact bytes of a stream (base64 in
	// JSON) when they are not valid UTF-8, which Stdout and Stderr then
	// show with U+FFFD in place of the invalid bytes; absent otherwise.
	StdoutB64       []byte  `json:"stdout_b64,omitempty"`
	StderrB64       []byte  `json:"stderr_b64,omitempty"`
	StdoutTruncated bool    `json:"stdout_truncated,omitempty"`
	StderrTruncated bool    `json:"stderr_truncated,omitempty"`
	DurationS       float64 `json:"duration_s"`
	QueuedS         float64 `json:"queued_s"` // time waiting for the policy
	PeakBytes       int64   `json:"peak_bytes"`
	OOM             bool    `json:"oom,omitempty"`
	TimedOut        bool    `json:"timed_out,omitempty"`
	// DiskFull says a disk limit was full when the action ended (the
	// sandbox's writable layer or the agent's workspace): its writes
	// failed with ENOSPC.
	DiskFull bool   `json:"disk_full,omitempty"`
	Sandbox  string `json:"sandbox"`
	// Failure is FailureOOM or FailureTimeout when the action was killed
	// for memory or time, FailureDisk when a disk limit is full, "" otherwise; Message then says so in words
	// (peak, budget, the other sandboxes, what survived, what to try),
	// fit to show the agent's model.
	Failure string `json:"failure,omitempty"`
	Message string `json:"message,omitempty"`
	// BudgetBytes and Others, with a Failure: the domain's budget and the
	// other live sandboxes when the response was built, largest first.
	BudgetBytes int64          `json:"budget_bytes,omitempty"`
	Others      []OtherSandbox `json:"others,omitempty"`
}

// OtherSandbox is another agent's live sandbox in a failure report.
type OtherSandbox struct {
	Agent    string `json:"agent"`
	Sandbox  string `json:"sandbox"`
	MemBytes int64  `json:"mem_bytes"`
	Running  bool   `json:"running"` // a command executes in it
}

// WaitRequest is the body of POST /v1/agents/{id}/wait.
type WaitRequest struct {
	State string `json:"state"` // "begin" or "end"
}

// Status is the answer to GET /v1/status.
type Status struct {
	Policy         string  `json:"policy"`
	Pressure       string  `json:"pressure"` // green, yellow, red
	BudgetBytes    int64   `json:"budget_bytes"`
	UsageBytes     int64   `json:"usage_bytes"`
	AvailableBytes int64   `json:"available_bytes"`
	WaterLevel     float64 `json:"water_level"`    // usage / budget
	ChargeBytes    int64   `json:"charge_bytes"`   // admitted charge outstanding
	QueuedAgents   int     `json:"queued_agents"`  // waiting in AgentReady
	QueuedActions  int     `json:"queued_actions"` // waiting in ActionReady or behind another action
	Running        int     `json:"running"`        // actions executing
	Resident       int     `json:"resident"`       // agents with a live sandbox
	PagedOut       int     `json:"paged_out"`      // of those, frozen with their memory paged out
	Absent         int     `json:"absent"`         // agents without one
	// AgentSlots is how many more agents the host can take now, by agent
	// pacing's rule (policy.AgentSlots): what a node agent publishes as
	// the extended resource tenon.dev/agent-slots. Absent for a policy
	// without agent pacing (no admission).
	AgentSlots *int `json:"agent_slots,omitempty"`
	// DaemonMemory is what the daemon itself holds (outside the budget).
	DaemonMemory int64 `json:"daemon_memory_bytes"`
	// BodyMemory is the share of Config.BodyMemory the large request
	// bodies in flight hold (bodies.go): a request that finds too little
	// left is answered 503.
	BodyMemory int64         `json:"body_memory_bytes"`
	Agents     []AgentStatus `json:"agents"`
}

// AgentStatus is one agent's line in Status.
type AgentStatus struct {
	ID        string `json:"id"`
	State     string `json:"state"`
	Sandbox   string `json:"sandbox,omitempty"`
	Residency string `json:"residency"`
	MemBytes  int64  `json:"mem_bytes"`
	Queued    int    `json:"queued"`
	Actions   int    `json:"actions"`
}

// Error is the body of every 4xx and 5xx answer.
type Error struct {
	Error string `json:"error"`
}
