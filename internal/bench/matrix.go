package bench

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/units"
)

// Case groups, in the order Cases returns them.
const (
	GroupStatic   = "static-sweep" // Static-N for several N on the headline workload and budget
	GroupMain     = "main"         // policies × workloads × budgets
	GroupAblation = "ablation"     // tenon and tenon with one mechanism off, headline workload and budget
	GroupLoad     = "load"         // offered-load sweep (number of workflows) at the tightest budget
	GroupRegion   = "region"       // tenon's yellow = red region size sweep
	GroupTraces   = "traces"       // the real trace sets, replicated, at TraceBudgets
	// GroupRealTools replays recorded tasks' own tool calls on their real
	// repositories (internal/realtools), replicated, under every policy.
	GroupRealTools = "real-tools"
)

// Groups lists every group in run order.
var Groups = []string{GroupStatic, GroupMain, GroupAblation, GroupLoad, GroupRegion, GroupTraces, GroupRealTools}

// DefaultGroups are the groups a matrix without Only runs: every group but
// the traces group, whose two real trace sets, replicated twice, at two
// budgets under five policies, three times, are estimated at 7.4 hours on
// 2 cores (Estimate), almost as long as the rest of the matrix (8.5
// hours); it runs only when asked for (Only).
var DefaultGroups = []string{GroupStatic, GroupMain, GroupAblation, GroupLoad, GroupRegion}

// BestStatic is the placeholder policy name that Run replaces with the best
// Static-N of the static sweep (see SelectBestStatic).
const BestStatic = "static-best"

// Policy sets.
var (
	// AllPolicies run on every workload at the tightest budget.
	AllPolicies = []string{"eager", BestStatic, "agent-reservation", "agentcgroup", "gate", "admission", "tenon"}
	// CorePolicies run on the other budgets.
	CorePolicies = []string{"eager", BestStatic, "agent-reservation", "agentcgroup", "tenon"}
	// AblationPolicies are tenon with one mechanism switched off (seed 000
	// Table 4), after tenon itself: the comparison is within one run of
	// the case. (Without it the ablations were read against the headline
	// case's tenon, run at another time: in the f2d30a9 snapshot, in
	// another sitting, the ablations on swe at 1 GiB ran in 30-46 s where
	// tenon had taken 67.8 s, and the simulator has all of them within
	// 5 % of tenon but the one without admission.)
	AblationPolicies = []string{"tenon", "tenon-no-admission", "tenon-no-gate", "tenon-always-resident", "tenon-static-pred", "tenon-history-pred"}
	// LoadPolicies run at every offered load (seed 000 Figure 13).
	LoadPolicies = []string{"eager", BestStatic, "tenon"}
)

// Case is one comparison: a workload replayed under several policies on one
// budget.
type Case struct {
	Name      string                `json:"name"`
	Group     string                `json:"group"`
	Workload  string                `json:"workload"`
	Workflows []trajectory.Workflow `json:"-"`
	Budget    int64                 `json:"budget_bytes"`
	Policies  []string              `json:"policies"`
	Params    map[string]string     `json:"params,omitempty"`
	TimeScale float64               `json:"time_scale"`
	// Headline marks the case the goals are computed from.
	Headline bool `json:"headline,omitempty"`
	// X is the sweep variable: N for the static sweep, oversubscription for
	// the load sweep, the region fraction for the region sweep.
	X float64 `json:"x,omitempty"`
	// ReferenceMiB, per workflow (its id before replication), is a peak
	// measured elsewhere that the results show beside each action's
	// measured peak (the real-tools manifest's figure).
	ReferenceMiB map[string]float64 `json:"reference_mib,omitempty"`
	// Reps is how many times the case is replayed (at least 1); its
	// numbers are the medians over them (report.Aggregate). In the results
	// JSON it is "repetitions": "reps" there is the list of the
	// repetitions' comparisons (fewer when one failed).
	Reps int `json:"repetitions,omitempty"`
}

// Oversubscription is the case's sum of profiled peaks / budget.
func (c Case) Oversubscription() float64 {
	return trajectory.Oversubscription(c.Workflows, c.Budget)
}

// Matrix describes a bench run.
type Matrix struct {
	// Budgets are the domain budgets; the smallest is the tightest, where the
	// headline case, the ablations and the sweeps run.
	Budgets []int64
	// Workloads are generated workload names (WorkloadNames) and, with
	// Traces, WorkloadTraces. The first is the headline workload.
	Workloads []string
	// Traces are imported real trajectories, replayed as workload "traces".
	Traces []trajectory.Workflow
	// N is the number of workflows of swe and science (rl and the duplicated
	// burst take fewer, see WorkflowCount); Seed seeds the generator.
	N    int
	Seed int64
	// TimeScale compresses arrivals, waits and action times of every case.
	TimeScale float64
	// TracesLength is how long the longest real-length workflow (the
	// traces, trace-set, real-tools and swe-real cases) may replay: those
	// cases run at TimeScale or faster (TracesTimeScale). 0 means
	// TracesMaxLength.
	TracesLength time.Duration
	// EveryBudget replays every workload at every budget; otherwise the
	// larger budgets replay only the headline workload (the budget axis on
	// one workload, the workload axis at the tightest budget).
	EveryBudget bool
	// Policies, when set, replace the main group's policy lists.
	Policies []string
	// Only restricts the cases to these groups (empty: every group).
	Only []string
	// StaticNs are the N of the static sweep.
	StaticNs []int
	// LoadNs are the workflow counts of the load sweep; the headline case
	// (N workflows) is the sweep's last point.
	LoadNs []int
	// Regions are the yellow = red fractions of the region sweep.
	Regions []float64
	// Reps is how many times every case is replayed (0 means 1): the
	// results are medians with their min–max, on a shared, noisy machine.
	Reps int
	// TraceSets are the real trace sets of the traces group
	// (LoadTraceSets); each is replicated TraceCopies times and replayed
	// at every TraceBudgets budget under the core policies (or Policies).
	TraceSets    []TraceSet
	TraceBudgets []int64
	// RealTools are the real-tools group's workflows (realtools.Build), one
	// per task, and RealToolsMiB each one's manifest figure by id;
	// RealToolsAgents is how many agents they are replicated to.
	RealTools       []trajectory.Workflow
	RealToolsMiB    map[string]float64
	RealToolsAgents int
}

// DefaultMatrix is the full matrix. Budgets 1, 1.5 and 2 GiB keep the
// paper's 4U8G : 6U12G : 8U16G ratio (1 : 1.5 : 2) on the same workload, so
// oversubscription falls from 9.3× to 4.6× as the budget rises. The
// tightest is small, and 20 swe workflows of 3–5 actions are about the
// fewest that reach the goal's 8.6× (a workflow's profiled peak is at most
// ~0.6 of 1 GiB), so that the matrix replays on 2 cores in about an hour;
// see Estimate.
func DefaultMatrix() Matrix {
	return Matrix{
		Budgets:   []int64{units.GiB, 3 * units.GiB / 2, 2 * units.GiB},
		Workloads: slices.Clone(WorkloadNames),
		N:         20, Seed: 1, TimeScale: 0.2,
		StaticNs: []int{1, 2, 3, 4, 6},
		LoadNs:   []int{8, 12, 16},
		Regions:  []float64{0.05, 0.10, 0.15, 0.20, 0.25},
		Reps:     3,
		// Half of the largest trace actions (1.8 GiB in the haiku set,
		// 3.6 GiB in batch18) fit neither; their workflows are reported
		// as infeasible.
		TraceBudgets: []int64{units.GiB, 2 * units.GiB},
	}
}

// QuickMatrix is the --quick subset: 8 swe workflows at 1 GiB (about 4×
// oversubscribed), Eager against tenon, once.
func QuickMatrix() Matrix {
	return Matrix{
		Budgets: []int64{units.GiB}, Workloads: []string{WorkloadSWE},
		N: 8, Seed: 1, TimeScale: 0.25,
		Policies: []string{"eager", "tenon"},
		Only:     []string{GroupMain},
		Reps:     1,
	}
}

// Wants reports whether the matrix runs group: one of Only, or of
// DefaultGroups when Only is empty.
func (m Matrix) Wants(group string) bool {
	if len(m.Only) == 0 {
		return slices.Contains(DefaultGroups, group)
	}
	return slices.Contains(m.Only, group)
}

func (m Matrix) check() error {
	if len(m.Budgets) == 0 {
		return fmt.Errorf("%w: no budget", ErrBadMatrix)
	}
	for _, b := range m.Budgets {
		if b <= 0 {
			return fmt.Errorf("%w: budget %d must be positive", ErrBadMatrix, b)
		}
	}
	if len(m.Workloads) == 0 {
		return fmt.Errorf("%w: no workload", ErrBadMatrix)
	}
	for _, w := range m.Workloads {
		switch {
		case w == WorkloadTraces && len(m.Traces) == 0:
			return fmt.Errorf("%w: workload %q needs a trace directory", ErrBadMatrix, w)
		case w != WorkloadTraces && !slices.Contains(WorkloadNames, w):
			return fmt.Errorf("%w: unknown workload %q (want %v or %s)", ErrBadMatrix, w, WorkloadNames, WorkloadTraces)
		}
	}
	for _, g := range m.Only {
		if !slices.Contains(Groups, g) {
			return fmt.Errorf("%w: unknown group %q (want %v)", ErrBadMatrix, g, Groups)
		}
	}
	if m.Wants(GroupTraces) {
		if len(m.TraceSets) == 0 {
			return fmt.Errorf("%w: group %s has no trace set (see LoadTraceSets)", ErrNoTraces, GroupTraces)
		}
		if len(m.TraceBudgets) == 0 {
			return fmt.Errorf("%w: group %s has no budget", ErrBadMatrix, GroupTraces)
		}
		for _, b := range m.TraceBudgets {
			if b <= 0 {
				return fmt.Errorf("%w: trace budget %d must be positive", ErrBadMatrix, b)
			}
		}
	}
	if m.Wants(GroupRealTools) && (len(m.RealTools) == 0 || m.RealToolsAgents <= 0) {
		return fmt.Errorf("%w: group %s needs its workflows and a positive agent count", ErrBadMatrix, GroupRealTools)
	}
	if m.N <= 0 {
		return fmt.Errorf("%w: workflows per workload must be positive, got %d", ErrBadMatrix, m.N)
	}
	if m.Reps < 0 {
		return fmt.Errorf("%w: repetitions must be positive, got %d", ErrBadMatrix, m.Reps)
	}
	if !(m.TimeScale > 0) {
		return fmt.Errorf("%w: time scale must be positive", ErrBadMatrix)
	}
	if m.TracesLength < 0 {
		return fmt.Errorf("%w: traces length must not be negative, got %v", ErrBadMatrix, m.TracesLength)
	}
	for _, n := range append(slices.Clone(m.StaticNs), m.LoadNs...) {
		if n <= 0 {
			return fmt.Errorf("%w: sweep value %d must be positive", ErrBadMatrix, n)
		}
	}
	for _, r := range m.Regions {
		if !(r > 0 && r < 0.5) {
			return fmt.Errorf("%w: region %g must be in (0, 0.5)", ErrBadMatrix, r)
		}
	}
	return nil
}

// Cases builds the case list in run order: static sweep, main (headline
// first), ablations, load sweep, region sweep, real trace sets.
func (m Matrix) Cases() ([]Case, error) {
	if err := m.check(); err != nil {
		return nil, err
	}
	budgets := slices.Clone(m.Budgets)
	sort.Slice(budgets, func(i, j int) bool { return budgets[i] < budgets[j] })
	budgets = slices.Compact(budgets)
	tight := budgets[0]
	wls := map[string][]trajectory.Workflow{}
	for _, w := range m.Workloads {
		if w == WorkloadTraces {
			wls[w] = m.Traces
			continue
		}
		wfs, err := Generate(w, m.N, m.Seed)
		if err != nil {
			return nil, err
		}
		wls[w] = wfs
	}
	head := m.Workloads[0]
	scale := func(wl string) float64 {
		switch wl {
		case WorkloadTraces:
			return m.tracesScale(m.Traces)
		case WorkloadSWEReal: // real-length workflows, compressed as the traces are
			return m.tracesScale(wls[wl])
		}
		return m.TimeScale
	}
	mk := func(group, name, wl string, wfs []trajectory.Workflow, budget int64, pols []string) Case {
		return Case{
			Name: name, Group: group, Workload: wl, Workflows: wfs, Budget: budget,
			Policies: slices.Clone(pols), TimeScale: scale(wl), Reps: max(m.Reps, 1),
		}
	}
	if slices.Contains(m.Workloads, WorkloadTraces) && !fits(m.Traces, budgets[len(budgets)-1]) {
		return nil, fmt.Errorf("%w: the largest trace action (%.0f MiB) does not fit any budget; add a larger one", ErrBadMatrix, maxActionPeakMiB(m.Traces))
	}
	var out []Case
	if m.Wants(GroupStatic) {
		for _, n := range m.StaticNs {
			c := mk(GroupStatic, fmt.Sprintf("static/%s/%s/N=%d", head, sizeName(tight), n), head, wls[head], tight, []string{fmt.Sprintf("static-%d", n)})
			c.X = float64(n)
			out = append(out, c)
		}
	}
	if m.Wants(GroupMain) {
		for i, b := range budgets {
			for _, w := range m.Workloads {
				if !fits(wls[w], b) {
					continue // traces whose largest action exceeds this budget
				}
				if w != head && !m.EveryBudget && b != firstFit(wls[w], budgets) {
					continue // other workloads: only at the tightest budget they fit
				}
				pols := CorePolicies
				if i == 0 {
					pols = AllPolicies
				}
				if len(m.Policies) > 0 {
					pols = m.Policies
				}
				c := mk(GroupMain, fmt.Sprintf("main/%s/%s", w, sizeName(b)), w, wls[w], b, pols)
				c.Headline = i == 0 && w == head
				out = append(out, c)
			}
		}
	}
	if m.Wants(GroupAblation) {
		// The ablations run on the headline workload and on the real-shape
		// one, where sandboxes idle between many small actions (what
		// residency and the predictor are for).
		for _, w := range m.Workloads {
			if w != head && (w != WorkloadSWEReal || !fits(wls[w], tight)) {
				continue
			}
			out = append(out, mk(GroupAblation, fmt.Sprintf("ablation/%s/%s", w, sizeName(tight)), w, wls[w], tight, AblationPolicies))
		}
	}
	if m.Wants(GroupLoad) && head != WorkloadTraces {
		for _, n := range m.LoadNs {
			wfs, err := Generate(head, n, m.Seed)
			if err != nil {
				return nil, err
			}
			c := mk(GroupLoad, fmt.Sprintf("load/%s/%s/n=%d", head, sizeName(tight), len(wfs)), head, wfs, tight, LoadPolicies)
			c.X = c.Oversubscription()
			out = append(out, c)
		}
	}
	if m.Wants(GroupRegion) {
		for _, r := range m.Regions {
			f := strconv.FormatFloat(r, 'f', -1, 64)
			c := mk(GroupRegion, fmt.Sprintf("region/%s/%s/%s", head, sizeName(tight), f), head, wls[head], tight, []string{"tenon"})
			c.Params = map[string]string{"yellow": f, "red": f}
			c.X = r
			out = append(out, c)
		}
	}
	if m.Wants(GroupTraces) {
		tc, err := m.traceCases()
		if err != nil {
			return nil, err
		}
		out = append(out, tc...)
	}
	if m.Wants(GroupRealTools) {
		c, err := m.realToolsCase()
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// traceCases are the traces group: every trace set replicated TraceCopies
// times (trajectory.Replicate with its default spacing and offset), at
// every trace budget, under the core policies, compressed as the traces
// workload is. Workflows that cannot fit a budget stay in the case: the
// replay skips them and the report counts them as infeasible.
func (m Matrix) traceCases() ([]Case, error) {
	budgets := slices.Clone(m.TraceBudgets)
	slices.Sort(budgets)
	budgets = slices.Compact(budgets)
	pols := CorePolicies
	if len(m.Policies) > 0 {
		pols = m.Policies
	}
	var out []Case
	for _, set := range m.TraceSets {
		wfs, err := trajectory.Replicate(set.Workflows, TraceCopies, trajectory.ReplicaSpacingS, trajectory.ReplicaOffsetS)
		if err != nil {
			return nil, fmt.Errorf("trace set %s: %w", set.Name, err)
		}
		for _, b := range budgets {
			out = append(out, Case{
				Name: fmt.Sprintf("%s/%s/%s", GroupTraces, set.Name, sizeName(b)), Group: GroupTraces, Workload: set.Name,
				Workflows: wfs, Budget: b, Policies: slices.Clone(pols),
				TimeScale: m.tracesScale(wfs), Reps: max(m.Reps, 1),
			})
		}
	}
	return out, nil
}

// sizeName renders a budget for case names: "1GiB", "1.5GiB", "768MiB".
func sizeName(b int64) string {
	if b >= units.GiB {
		return strconv.FormatFloat(float64(b)/float64(units.GiB), 'f', -1, 64) + "GiB"
	}
	return strconv.FormatFloat(float64(b)/float64(units.MiB), 'f', -1, 64) + "MiB"
}

// TracesMaxLength is how long the longest imported trace (or real-shape
// workflow) replays by default (Matrix.TracesLength): they are real
// (minutes of model time per task), so they are compressed further than
// the generated workloads. It packs a run's CPU work (tool starts, page
// faults) into a twelfth of the traces' own time or less, which on a small
// host makes the replay CPU-bound where agents at their own pace would not
// be; a longer TracesLength replays closer to that pace.
const TracesMaxLength = 60 * time.Second

// TracesTimeScale is the time scale of real-length workflows wfs: base, or
// less so that the longest replays in maxLen (TracesMaxLength when 0).
func TracesTimeScale(wfs []trajectory.Workflow, base float64, maxLen time.Duration) float64 {
	if maxLen <= 0 {
		maxLen = TracesMaxLength
	}
	var longest float64
	for _, w := range wfs {
		longest = max(longest, w.LengthS())
	}
	if longest*base <= maxLen.Seconds() {
		return base
	}
	return maxLen.Seconds() / longest
}

// tracesScale is TracesTimeScale at the matrix's time scale and length.
func (m Matrix) tracesScale(wfs []trajectory.Workflow) float64 {
	return TracesTimeScale(wfs, m.TimeScale, m.TracesLength)
}

func maxActionPeakMiB(wfs []trajectory.Workflow) float64 {
	var p float64
	for _, w := range wfs {
		p = max(p, w.PeakMiB())
	}
	return p
}

// fits reports whether every action of wfs fits the budget alone, with a
// tenth of it to spare for the sandboxes.
func fits(wfs []trajectory.Workflow, budget int64) bool {
	return maxActionPeakMiB(wfs)*float64(units.MiB) <= 0.9*float64(budget)
}

// firstFit is the smallest budget every action of wfs fits, 0 if none.
func firstFit(wfs []trajectory.Workflow, budgets []int64) int64 {
	for _, b := range budgets {
		if fits(wfs, b) {
			return b
		}
	}
	return 0
}
