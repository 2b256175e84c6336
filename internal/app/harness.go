package app

import (
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/tenon-dev/tenon/internal/anchor/harness"
	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/trajectory/agentcgroup"
	"github.com/tenon-dev/tenon/internal/workload"
)

// errNoSwap is HarnessReplay's error when no swap is on and HarnessConfig.Swap
// is 0.
var errNoSwap = errors.New("no swap is on: set --swap SIZE (zram, removed at the end) or run 'tenon swap enable'")

// HarnessConfig is a replay of trajectories against a harness holding a
// heap, each workflow without and with memory intents.
type HarnessConfig struct {
	// SWE generated swe workflows from Seed, and the first TracesN
	// workflows (by id, with at least 4 actions) imported from the
	// AgentCgroup trace directory Traces ("" for none).
	SWE     int
	Seed    int64
	Traces  string
	TracesN int

	Heap harness.HeapSpec
	// Plan cuts each workflow down to the steps replayed; its Exe is the
	// tenon binary inside the sandbox.
	Plan harness.PlanOptions
	// Grace, Lead and Sample are harness.Options': the broker's grace, the
	// prefetch lead and the memory sampling period.
	Grace, Lead, Sample time.Duration
	// Swap is the zram swap set up for the run when no swap is on (0:
	// require swap).
	Swap   int64
	Budget int64 // workload domain memory limit

	// Progress receives a line per replay and a line when removing the
	// zram swap fails; nil shows none.
	Progress io.Writer
	Log      *slog.Logger // nil discards
}

// HarnessResult is every workflow's pair of replays, the totals per set
// (swe, traces) and over all, and how long the replays took.
type HarnessResult struct {
	Pairs  []harness.Pair
	Totals []harness.Totals
	Wall   time.Duration
}

type workflowSet struct {
	name string
	wfs  []trajectory.Workflow
}

// harnessSets generates the swe workflows and picks imported ones: the
// first cfg.TracesN (by id) with at least 4 actions.
func harnessSets(cfg HarnessConfig) ([]workflowSet, error) {
	var sets []workflowSet
	if cfg.SWE > 0 {
		wfs, err := workload.Generate("swe", cfg.SWE, cfg.Seed, workload.Options{})
		if err != nil {
			return nil, err
		}
		sets = append(sets, workflowSet{"swe", wfs})
	}
	if cfg.Traces != "" && cfg.TracesN > 0 {
		wfs, _, err := agentcgroup.Import(cfg.Traces)
		if err != nil {
			return nil, err
		}
		slices.SortFunc(wfs, func(a, b trajectory.Workflow) int { return strings.Compare(a.ID, b.ID) })
		var pick []trajectory.Workflow
		for _, wf := range wfs {
			if len(wf.Actions) >= 4 && len(pick) < cfg.TracesN {
				pick = append(pick, wf)
			}
		}
		sets = append(sets, workflowSet{"traces", pick})
	}
	if len(sets) == 0 {
		return nil, errors.New("nothing to replay: set --swe or --traces")
	}
	return sets, nil
}
