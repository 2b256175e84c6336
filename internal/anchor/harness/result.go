package harness

import "time"

// Mode is how a replay treats memory.
type Mode string

// Modes.
const (
	Baseline Mode = "baseline" // no intents: no scopes, no page-out
	Intents  Mode = "intents"  // scoped tools; the waiting harness is suspended and paged out
)

// HeapSpec is the harness's heap (`tenon harness heap` flags).
type HeapSpec struct {
	MiB           int           // heap size
	TouchPercent  int           // share touched per step
	Step          time.Duration // pause between steps
	RandomPerPage int           // random bytes per 4 KiB page (compressibility)
}

// Result is one replay.
type Result struct {
	Workflow    string        `json:"workflow"`
	Mode        Mode          `json:"mode"`
	Steps       int           `json:"steps"`
	HarnessTime time.Duration `json:"harness_time_ns"`
	FloorMiB    float64       `json:"floor_mib"`
	// RAMMiBs and BackingMiBs are the integrals above the floor, MiB·s:
	// usage, and usage plus the RAM the sandbox's swap costs compressed.
	RAMMiBs     float64 `json:"ram_mib_s"`
	BackingMiBs float64 `json:"backing_mib_s"`
	PeakMiB     float64 `json:"peak_mib"`
	Suspensions int     `json:"suspensions"`
	// PagedOut is the smallest share of the harness heap's resident
	// anonymous memory that left RAM in a suspension (0..1).
	PagedOut float64 `json:"paged_out_min"`
	// ResumeMax is the longest response-to-thawed delay on the harness's path.
	ResumeMax time.Duration `json:"resume_max_ns"`
	// Late sums how long the harness was not ready (still paging out or
	// prefetching) when a model response arrived; ToolTime sums the tool
	// calls' wall time. Both are part of HarnessTime.
	Late     time.Duration `json:"late_ns"`
	ToolTime time.Duration `json:"tool_time_ns"`
	// Verified: the heap's full checksum verification passed after the replay.
	Verified bool     `json:"verified"`
	Samples  []Sample `json:"-"`
}
