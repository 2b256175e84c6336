package bench

import "time"

// Meta says how and where a bench run was made, for the results files.
type Meta struct {
	Name    string    `json:"name"`
	Command string    `json:"command"`
	Commit  string    `json:"commit"`
	Dirty   bool      `json:"dirty"`
	Machine string    `json:"machine"`
	Backend string    `json:"backend"`
	Started time.Time `json:"started"`
	// Resumed says where the cases taken from an earlier run come from
	// (tenon bench --resume); "" when none were.
	Resumed string        `json:"resumed,omitempty"`
	Wall    time.Duration `json:"-"`
}

// Plot file suffixes, after "<name>-".
const (
	PlotWorkloads = "workloads.png" // seed 000 Figure 9
	PlotAblation  = "ablation.png"  // Figure 11
	PlotLoad      = "load.png"      // Figure 13
	PlotRegion    = "region.png"    // Figure 14
)
