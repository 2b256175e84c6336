package bench

import (
	"errors"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/units"
)

func TestDefaultMatrixCases(t *testing.T) {
	m := DefaultMatrix()
	cs := mustCases(t, m)
	// The default groups appear in run order, static sweep first.
	var order []string
	for _, c := range cs {
		if len(order) == 0 || order[len(order)-1] != c.Group {
			order = append(order, c.Group)
		}
	}
	if !slices.Equal(order, DefaultGroups) {
		t.Fatalf("group order %v, want %v", order, DefaultGroups)
	}
	var heads []Case
	perBudget := map[int64]int{}
	for _, c := range cs {
		if c.Headline {
			heads = append(heads, c)
		}
		if c.Group == GroupMain {
			perBudget[c.Budget]++
			want := CorePolicies
			if c.Budget == units.GiB {
				want = AllPolicies
			}
			if !slices.Equal(c.Policies, want) {
				t.Errorf("%s: policies %v, want %v", c.Name, c.Policies, want)
			}
		}
		wantScale := m.TimeScale
		if c.Workload == WorkloadSWEReal { // real-length workflows, compressed as the traces are
			wantScale = TracesTimeScale(c.Workflows, m.TimeScale, m.TracesLength)
			if wantScale >= m.TimeScale {
				t.Errorf("%s: real-length workflows not compressed beyond the matrix's %g", c.Name, m.TimeScale)
			}
		}
		if c.TimeScale != wantScale || len(c.Workflows) == 0 {
			t.Errorf("%s: time scale %g, %d workflows", c.Name, c.TimeScale, len(c.Workflows))
		}
	}
	if len(heads) != 1 || heads[0].Name != "main/swe/1GiB" {
		t.Fatalf("headline cases %v, want one main/swe/1GiB", heads)
	}
	if o := heads[0].Oversubscription(); o < TargetOversubscription {
		t.Errorf("headline oversubscription %.2f below the goal's %.1f", o, TargetOversubscription)
	}
	// Every workload at the tightest budget, the headline one at the others.
	for i, b := range m.Budgets {
		want := 1
		if i == 0 {
			want = len(WorkloadNames)
		}
		if perBudget[b] != want {
			t.Errorf("budget %d: %d main cases, want %d", b, perBudget[b], want)
		}
	}
	// Oversubscription falls as the budget rises, on the same workload.
	var prev float64
	for _, c := range cs {
		if c.Group == GroupMain && c.Workload == WorkloadSWE {
			if o := c.Oversubscription(); prev != 0 && o >= prev {
				t.Errorf("%s: oversubscription %.2f not below %.2f", c.Name, o, prev)
			} else {
				prev = o
			}
		}
	}
	// Load sweep rises towards the headline; region params are yellow = red.
	prev = 0
	var ablations []string
	for _, c := range cs {
		switch c.Group {
		case GroupLoad:
			if c.X <= prev || c.X >= heads[0].Oversubscription() {
				t.Errorf("%s: load %.2f not between %.2f and the headline", c.Name, c.X, prev)
			}
			prev = c.X
			if !slices.Equal(c.Policies, LoadPolicies) {
				t.Errorf("%s: policies %v", c.Name, c.Policies)
			}
		case GroupRegion:
			if c.Params["yellow"] != c.Params["red"] || c.Params["yellow"] == "" || c.X < 0.05 || c.X > 0.25 {
				t.Errorf("%s: params %v x %g", c.Name, c.Params, c.X)
			}
		case GroupAblation:
			ablations = append(ablations, c.Workload)
			if !slices.Equal(c.Policies, AblationPolicies) || c.Budget != units.GiB {
				t.Errorf("%s: %v on %s at %d", c.Name, c.Policies, c.Workload, c.Budget)
			}
			// Each ablation is compared with tenon run in the same case.
			if len(c.Policies) == 0 || c.Policies[0] != "tenon" {
				t.Errorf("%s: policies %v, want tenon first", c.Name, c.Policies)
			}
		}
	}
	// The ablations run on the headline workload and the real-shape one.
	if !slices.Equal(ablations, []string{WorkloadSWE, WorkloadSWEReal}) {
		t.Errorf("ablations on %v, want [swe swe-real]", ablations)
	}
	// The estimate adds up per policy: dropping a group shortens it.
	m.Only = []string{GroupStatic, GroupMain, GroupAblation, GroupLoad}
	if full, less := Estimate(cs), Estimate(mustCases(t, m)); less >= full || less <= 0 {
		t.Errorf("estimate without the region sweep %s, full %s", less, full)
	}
}

// TestEstimateReps: the estimate counts every repetition; the full matrix
// repeats each case 3 times, --quick once.
func TestEstimateReps(t *testing.T) {
	m := DefaultMatrix()
	m.Only = []string{GroupMain}
	three := mustCases(t, m)
	m.Reps = 1
	one := mustCases(t, m)
	m.Reps = 0 // means once
	zero := mustCases(t, m)
	for i := range three {
		if three[i].Reps != 3 || one[i].Reps != 1 || zero[i].Reps != 1 {
			t.Fatalf("%s: reps %d, %d, %d; want 3, 1, 1", three[i].Name, three[i].Reps, one[i].Reps, zero[i].Reps)
		}
	}
	if e3, e1 := Estimate(three), Estimate(one); e3 != 3*e1 || e1 != Estimate(zero) {
		t.Errorf("estimate with 3 reps %s, with 1 %s; want three times", e3, e1)
	}
	if q := mustCases(t, QuickMatrix()); q[0].Reps != 1 {
		t.Errorf("quick reps %d, want 1", q[0].Reps)
	}
}

func TestQuickMatrix(t *testing.T) {
	cs := mustCases(t, QuickMatrix())
	if len(cs) != 1 {
		t.Fatalf("%d quick cases, want 1", len(cs))
	}
	c := cs[0]
	if !c.Headline || !slices.Equal(c.Policies, []string{"eager", "tenon"}) || c.Oversubscription() < 4 {
		t.Errorf("quick case %s: headline %v policies %v oversubscription %.2f", c.Name, c.Headline, c.Policies, c.Oversubscription())
	}
	if est := Estimate(cs); est.Minutes() > 5 {
		t.Errorf("quick estimated at %s, want <= 5 minutes", est)
	}
}

func TestMatrixOptions(t *testing.T) {
	m0 := DefaultMatrix()
	trace := []trajectory.Workflow{{ID: "t", Actions: []trajectory.Action{{Wait: 1000, Mem: &trajectory.MemProfile{PeakMiB: 1500, RampS: 1, HoldS: 1}}}}}
	tests := []struct {
		name  string
		edit  func(*Matrix)
		check func(t *testing.T, cs []Case)
	}{
		{"only region", func(m *Matrix) { m.Only = []string{GroupRegion} }, func(t *testing.T, cs []Case) {
			if len(cs) != 5 {
				t.Errorf("%d cases, want 5", len(cs))
			}
		}},
		{"policies override main only", func(m *Matrix) { m.Policies = []string{"tenon"}; m.Only = []string{GroupMain, GroupLoad} }, func(t *testing.T, cs []Case) {
			for _, c := range cs {
				if c.Group == GroupMain && !slices.Equal(c.Policies, []string{"tenon"}) || c.Group == GroupLoad && !slices.Equal(c.Policies, LoadPolicies) {
					t.Errorf("%s: %v", c.Name, c.Policies)
				}
			}
		}},
		{"traces only where they fit, compressed", func(m *Matrix) {
			m.Traces, m.Workloads, m.Only = trace, []string{WorkloadSWE, WorkloadTraces}, []string{GroupMain}
		}, func(t *testing.T, cs []Case) {
			var got []string
			for _, c := range cs {
				if c.Workload == WorkloadTraces {
					got = append(got, c.Name)
					if c.TimeScale >= 0.2 || c.TimeScale*trace[0].LengthS() > TracesMaxLength.Seconds()+1e-9 {
						t.Errorf("%s: time scale %g", c.Name, c.TimeScale)
					}
				}
			}
			if !slices.Equal(got, []string{"main/traces/2GiB"}) {
				t.Errorf("trace cases %v, want only the 2 GiB one", got)
			}
		}},
		{"traces length: a longer replay, a milder compression", func(m *Matrix) {
			m.Traces, m.Workloads, m.Only = trace, []string{WorkloadSWE, WorkloadTraces}, []string{GroupMain}
			m.TracesLength = 3 * TracesMaxLength
		}, func(t *testing.T, cs []Case) {
			want := min(m0.TimeScale, 3*TracesMaxLength.Seconds()/trace[0].LengthS())
			for _, c := range cs {
				if c.Workload == WorkloadTraces && math.Abs(c.TimeScale-want) > 1e-12 {
					t.Errorf("%s: time scale %g, want %g", c.Name, c.TimeScale, want)
				}
			}
		}},
		{"every budget", func(m *Matrix) { m.EveryBudget = true; m.Only = []string{GroupMain} }, func(t *testing.T, cs []Case) {
			if want := len(m0.Budgets) * len(WorkloadNames); len(cs) != want {
				t.Errorf("%d main cases, want %d", len(cs), want)
			}
		}},
		{"unsorted budgets: tightest is the headline", func(m *Matrix) { m.Budgets = []int64{2 * units.GiB, units.GiB}; m.Only = []string{GroupMain} }, func(t *testing.T, cs []Case) {
			if !cs[0].Headline || cs[0].Budget != units.GiB {
				t.Errorf("first case %s headline %v", cs[0].Name, cs[0].Headline)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := DefaultMatrix()
			tt.edit(&m)
			tt.check(t, mustCases(t, m))
		})
	}
}

func TestMatrixErrors(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Matrix)
	}{
		{"no budget", func(m *Matrix) { m.Budgets = nil }},
		{"negative budget", func(m *Matrix) { m.Budgets = []int64{-1} }},
		{"unknown workload", func(m *Matrix) { m.Workloads = []string{"web"} }},
		{"no workload", func(m *Matrix) { m.Workloads = nil }},
		{"traces without a directory", func(m *Matrix) { m.Workloads = []string{WorkloadTraces} }},
		{"unknown group", func(m *Matrix) { m.Only = []string{"mains"} }},
		{"zero workflows", func(m *Matrix) { m.N = 0 }},
		{"zero time scale", func(m *Matrix) { m.TimeScale = 0 }},
		{"negative traces length", func(m *Matrix) { m.TracesLength = -time.Second }},
		{"bad static N", func(m *Matrix) { m.StaticNs = []int{0} }},
		{"region too large", func(m *Matrix) { m.Regions = []float64{0.5} }},
		{"negative repetitions", func(m *Matrix) { m.Reps = -1 }},
		{"traces too big for every budget", func(m *Matrix) {
			m.Workloads = []string{WorkloadTraces}
			m.Traces = []trajectory.Workflow{{ID: "t", Actions: []trajectory.Action{{Mem: &trajectory.MemProfile{PeakMiB: 4096, RampS: 1}}}}}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := DefaultMatrix()
			tt.edit(&m)
			if _, err := m.Cases(); !errors.Is(err, ErrBadMatrix) {
				t.Fatalf("err = %v, want ErrBadMatrix", err)
			}
		})
	}
}

func TestGenerateDuplicateBurst(t *testing.T) {
	wfs, err := Generate(WorkloadDuplicate, 10, 1)
	if err != nil {
		t.Fatal(err)
	}
	swe, err := Generate(WorkloadSWE, max(8, WorkflowCount(WorkloadDuplicate, 10)), 1) // the pool it picks from
	if err != nil {
		t.Fatal(err)
	}
	var heaviest float64
	for _, w := range swe {
		heaviest = max(heaviest, w.ProfiledPeakMiB())
	}
	if len(wfs) != WorkflowCount(WorkloadDuplicate, 10) {
		t.Fatalf("%d workflows, want %d", len(wfs), WorkflowCount(WorkloadDuplicate, 10))
	}
	ids := map[string]bool{}
	for _, w := range wfs {
		if w.Arrival != 0 || w.ProfiledPeakMiB() != heaviest || len(w.Actions) != len(wfs[0].Actions) {
			t.Errorf("%s: arrival %g peak %.0f (heaviest swe %.0f)", w.ID, w.Arrival, w.ProfiledPeakMiB(), heaviest)
		}
		ids[w.ID] = true
	}
	if len(ids) != len(wfs) {
		t.Errorf("workflow IDs not unique: %v", ids)
	}
	if _, err := Generate("web", 3, 1); !errors.Is(err, ErrBadMatrix) {
		t.Errorf("unknown workload: err = %v", err)
	}
}
