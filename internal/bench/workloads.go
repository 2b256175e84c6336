package bench

import (
	"fmt"
	"slices"

	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/workload"
)

// Workload names. Traces is the imported trace set (Matrix.Traces).
const (
	WorkloadSWE       = "swe"
	WorkloadScience   = "science"
	WorkloadRL        = "rl"
	WorkloadDuplicate = "swe-duplicate"
	WorkloadSWEReal   = "swe-real"
	WorkloadTraces    = "traces"
)

// WorkloadNames are the generated workloads, in matrix order.
var WorkloadNames = []string{WorkloadSWE, WorkloadScience, WorkloadRL, WorkloadDuplicate, WorkloadSWEReal}

// GenOptions shape every generated bench workload: the calibrated
// distributions with memory ×10 and action peaks capped at 600 MiB (so one
// action fits the tightest 1 GiB budget with room for a second light one),
// one action in four heavy, 3–5 actions per workflow, model waits halved
// and capped at 6 s, action durations in [0.2, 10] s, 4 workflows arriving
// per second. Few actions per workflow keep the memory-time area (and so the
// run time) small while the per-workflow peaks, which set the
// oversubscription, stay those of the calibrated workload.
var GenOptions = workload.Options{
	MemScale: 10, MaxPeakMiB: 600, HeavyShare: 0.25,
	MinActions: 3, MaxActions: 5,
	WaitScale: 0.5, MaxWaitS: 6,
	MinDurationS: 0.2, MaxDurationS: 10,
	QPS: 4,
}

// RealGenOptions shape the real-shape workload (WorkloadSWEReal, generated
// as workload kind "swe-real"): the traces' memory scale, action counts and
// waits (workload.RealMaxPeakMiB and RealMaxWaitS cap only the tail), with
// the arrivals of GenOptions.
var RealGenOptions = workload.Options{QPS: GenOptions.QPS}

// sizeFactor scales the number of workflows per workload so that each
// replays in about the same time: rl and the duplicated burst make every
// workflow heavy, and science actions are heavier and longer, so fewer of
// them fill the budget as long.
//
// swe-real gets the traces' own count (45 imported haiku runs for the
// matrix's 20): its workflows peak at the traces' scale, about 150 MiB on
// average, so at that count the profiled peaks sum to about 6.8 GiB for
// seed 1, against the traces' 6.3 GiB, and oversubscribe a budget as the
// traces do.
func sizeFactor(name string) float64 {
	switch name {
	case WorkloadSWEReal:
		return 2.25
	case WorkloadDuplicate:
		return 0.5
	case WorkloadRL:
		return 0.6
	case WorkloadScience:
		return 0.7
	}
	return 1
}

// WorkflowCount is how many workflows workload name gets when the matrix
// asks for n.
func WorkflowCount(name string, n int) int {
	return max(1, int(float64(n)*sizeFactor(name)+0.5))
}

// Generate builds the generated workload name with n workflows (before
// WorkflowCount) from seed. The duplicated burst repeats the workload's
// heaviest swe workflow (largest profiled peak) n times, all arriving at 0:
// the adversarial case of seed 000 §5.4.
func Generate(name string, n int, seed int64) ([]trajectory.Workflow, error) {
	if !slices.Contains(WorkloadNames, name) {
		return nil, fmt.Errorf("%w: unknown workload %q (want one of %v or %s)", ErrBadMatrix, name, WorkloadNames, WorkloadTraces)
	}
	count := WorkflowCount(name, n)
	if name != WorkloadDuplicate {
		opts := GenOptions
		if name == WorkloadSWEReal {
			opts = RealGenOptions
		}
		wfs, err := workload.Generate(name, count, seed, opts)
		if err != nil {
			return nil, fmt.Errorf("generating %s: %w", name, err)
		}
		return wfs, nil
	}
	pool, err := workload.Generate(WorkloadSWE, max(count, 8), seed, GenOptions)
	if err != nil {
		return nil, fmt.Errorf("generating %s: %w", name, err)
	}
	heaviest := pool[0]
	for _, w := range pool[1:] {
		if w.ProfiledPeakMiB() > heaviest.ProfiledPeakMiB() {
			heaviest = w
		}
	}
	out := make([]trajectory.Workflow, count)
	for i := range out {
		w := heaviest
		w.Actions = slices.Clone(heaviest.Actions)
		w.ID, w.Arrival = fmt.Sprintf("%s-%03d", name, i), 0
		out[i] = w
	}
	return out, nil
}
