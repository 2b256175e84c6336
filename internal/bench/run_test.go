package bench

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/clock/clocktest"
	"github.com/tenon-dev/tenon/internal/report"
)

func sweepMatrix() Matrix {
	m := DefaultMatrix()
	m.Workloads, m.N, m.Budgets = []string{WorkloadSWE}, 4, m.Budgets[:1]
	m.Only = []string{GroupStatic, GroupMain, GroupLoad}
	m.LoadNs = []int{2}
	m.Reps = 1 // TestRunReps repeats
	return m
}

func TestRunResolvesBestStaticAndContinuesPastFailures(t *testing.T) {
	cs := mustCases(t, sweepMatrix())
	table := fakeRun{
		"static/swe/1GiB/N=2": {"static-2": metrics("static-2", 90, 4, 4, 0)},
		"static/swe/1GiB/N=3": {"static-3": metrics("static-3", 60, 4, 4, 2)},
		"static/swe/1GiB/N=1": {"static-1": metrics("static-1", 150, 4, 4, 0)},
		"static/swe/1GiB/N=4": {"static-4": metrics("static-4", 40, 3, 4, 9)}, // faster but not 100%
		// N=6 missing: the case fails, the run goes on.
		"main/swe/1GiB": {
			"eager": metrics("eager", 50, 2, 4, 20), "static-3": metrics("static-3", 61, 4, 4, 1),
			"agent-reservation": metrics("agent-reservation", 100, 4, 4, 0), "agentcgroup": metrics("agentcgroup", 70, 4, 4, 3),
			"gate": metrics("gate", 45, 4, 4, 1), "admission": metrics("admission", 48, 4, 4, 1), "tenon": metrics("tenon", 30, 4, 4, 0),
		},
	}
	var seen []string
	clk := clocktest.NewManual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	run := func(ctx context.Context, c Case, rep int) (*report.Comparison, error) { // each case takes a second
		clk.Advance(time.Second)
		return table.run(ctx, c, rep)
	}
	res := Run(context.Background(), cs, Config{Run: run, FallbackStatic: "static-4", Clock: clk,
		Progress: func(i, n int, c Case, _ int) { seen = append(seen, c.Name) }})
	if res.BestStatic != "static-3" {
		t.Fatalf("best static %q (%s), want static-3", res.BestStatic, res.BestStaticWhy)
	}
	if len(res.Outcomes) != len(cs) || res.Partial() || len(seen) != len(cs) {
		t.Fatalf("%d outcomes, %d progress calls for %d cases, partial %v", len(res.Outcomes), len(seen), len(cs), res.Partial())
	}
	var failed []string
	for _, o := range res.Outcomes {
		if o.Err != nil {
			failed = append(failed, o.Case.Name)
		}
		if o.Wall != time.Second {
			t.Errorf("%s: wall %s, want 1s from the injected clock", o.Case.Name, o.Wall)
		}
		if slices.Contains(o.Case.Policies, BestStatic) {
			t.Errorf("%s: %s not resolved: %v", o.Case.Name, BestStatic, o.Case.Policies)
		}
	}
	// The N=6 static case and the load case (not in the table) fail.
	if !slices.Equal(failed, []string{"static/swe/1GiB/N=6", "load/swe/1GiB/n=2"}) {
		t.Errorf("failed cases %v", failed)
	}
	if h := res.Headline(); h == nil || !slices.Contains(h.Case.Policies, "static-3") {
		t.Errorf("headline %+v does not run static-3", h)
	}
}

func TestSelectBestStatic(t *testing.T) {
	out := func(group string, ms ...report.Metrics) Outcome {
		return Outcome{Case: Case{Group: group}, Comparison: &report.Comparison{Results: ms}}
	}
	tests := []struct {
		name         string
		outs         []Outcome
		want         string
		wantComplete bool
	}{
		{"fastest complete", []Outcome{out(GroupStatic, metrics("static-2", 80, 5, 5, 0)), out(GroupStatic, metrics("static-4", 50, 5, 5, 3)), out(GroupStatic, metrics("static-6", 30, 4, 5, 9))}, "static-4", true},
		{"none complete: most completed, then fastest", []Outcome{out(GroupStatic, metrics("static-6", 30, 3, 5, 9)), out(GroupStatic, metrics("static-2", 60, 4, 5, 2)), out(GroupStatic, metrics("static-3", 50, 4, 5, 5))}, "static-3", false},
		{"main group ignored", []Outcome{out(GroupMain, metrics("static-2", 10, 5, 5, 0)), out(GroupStatic, metrics("static-3", 50, 5, 5, 0))}, "static-3", true},
		{"no sweep", nil, "", false},
		{"failed case without comparison", []Outcome{{Case: Case{Group: GroupStatic}, Err: errFake}}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, complete, why := SelectBestStatic(tt.outs)
			if got != tt.want || complete != tt.wantComplete {
				t.Errorf("best %q complete %v (%s), want %q %v", got, complete, why, tt.want, tt.wantComplete)
			}
		})
	}
}

func TestRunFallbackStatic(t *testing.T) {
	m := sweepMatrix()
	m.Only = []string{GroupLoad}
	cs := mustCases(t, m)
	var got []string
	Run(context.Background(), cs, Config{Run: func(_ context.Context, c Case, _ int) (*report.Comparison, error) {
		got = c.Policies
		return &report.Comparison{}, nil
	}, FallbackStatic: "static-4"})
	if !slices.Equal(got, []string{"eager", "static-4", "tenon"}) {
		t.Errorf("policies %v, want the fallback static", got)
	}
}

func TestRunStopsOnCancel(t *testing.T) {
	cs := mustCases(t, sweepMatrix())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	res := Run(ctx, cs, Config{Run: func(ctx context.Context, c Case, _ int) (*report.Comparison, error) {
		calls++
		if calls == 2 {
			cancel() // interrupted in the middle of the second case, which returns no error
			return &report.Comparison{Results: []report.Metrics{metrics(c.Policies[0], 5, 1, 4, 0)}}, nil
		}
		return &report.Comparison{Results: []report.Metrics{metrics(c.Policies[0], 5, 4, 4, 0)}}, nil
	}})
	if calls != 2 || len(res.Outcomes) != 2 || !res.Interrupted || !res.Partial() {
		t.Fatalf("calls %d, outcomes %d, interrupted %v", calls, len(res.Outcomes), res.Interrupted)
	}
	if !errors.Is(res.Outcomes[1].Err, context.Canceled) || res.Outcomes[1].Comparison == nil {
		t.Errorf("interrupted case kept err %v, comparison %v", res.Outcomes[1].Err, res.Outcomes[1].Comparison)
	}
}

// TestRunReps: every case is replayed Reps times; its comparison is the
// median of the repetitions, the best static is chosen on medians, and a
// failed repetition ends the case with what it had.
func TestRunReps(t *testing.T) {
	m := sweepMatrix()
	m.Only, m.StaticNs, m.Reps = []string{GroupStatic, GroupMain}, []int{2, 3}, 3
	m.Policies = []string{"eager", "tenon"}
	cs := mustCases(t, m)
	makespans := map[string][]float64{ // per rep
		"static-2": {90, 50, 95},  // median 90
		"static-3": {60, 100, 70}, // median 70: the best on medians, though static-2 had the fastest rep
		"eager":    {40, 45, 50},
		"tenon":    {20, 30, 25},
	}
	var progress []int
	res := Run(context.Background(), cs, Config{Progress: func(_, _ int, _ Case, rep int) { progress = append(progress, rep) },
		Run: func(_ context.Context, c Case, rep int) (*report.Comparison, error) {
			cmp := &report.Comparison{LowerBoundS: 10}
			for _, p := range c.Policies {
				if c.Group == GroupMain && rep == 2 && p == "tenon" {
					return cmp, errFake // the third rep of the main case fails half way
				}
				cmp.Results = append(cmp.Results, metrics(p, makespans[p][rep], 4, 4, 0))
			}
			return cmp, nil
		}})
	if !slices.Equal(progress, []int{0, 1, 2, 0, 1, 2, 0, 1, 2}) {
		t.Errorf("progress reps %v, want 0,1,2 per case", progress)
	}
	if res.BestStatic != "static-3" {
		t.Errorf("best static %s, want static-3 (on medians)", res.BestStatic)
	}
	static3 := res.Outcomes[1]
	if len(static3.Reps) != 3 || static3.Err != nil {
		t.Fatalf("static-3: %d reps, err %v", len(static3.Reps), static3.Err)
	}
	if m, _ := static3.Comparison.Policy("static-3"); m.MakespanS != 70 || m.Reps != 3 || m.Spread.MakespanS != [2]report.Seconds{60, 100} {
		t.Errorf("static-3 median %+v, want 70 (60–100) over 3", m)
	}
	head := res.Headline()
	if head == nil || len(head.Reps) != 3 || !errors.Is(head.Err, errFake) || !strings.Contains(head.Err.Error(), "repetition 3 of 3") {
		t.Fatalf("headline %+v, want 3 reps and the third's error", head)
	}
	eager, _ := head.Comparison.Policy("eager")
	tenon, _ := head.Comparison.Policy("tenon")
	if eager.MakespanS != 45 || eager.Reps != 3 || tenon.MakespanS != 25 || tenon.Reps != 2 {
		t.Errorf("headline medians eager %v over %d, tenon %v over %d; want 45 over 3, 25 over 2",
			eager.MakespanS, eager.Reps, tenon.MakespanS, tenon.Reps)
	}
}

// TestRunResumes: a case with a complete outcome in Config.Done is taken
// as it is (Resumed), also for the static sweep's best; one that failed,
// has fewer repetitions, other workflows or another budget is replayed;
// AfterCase sees every case; the JSON keeps what a later resume needs.
func TestRunResumes(t *testing.T) {
	m := sweepMatrix()
	m.Only, m.StaticNs, m.Reps = []string{GroupStatic, GroupMain}, []int{2, 3}, 2
	m.Policies = []string{"eager", "tenon"}
	cs := mustCases(t, m)
	if len(cs) != 3 {
		t.Fatalf("%d cases, want static-2, static-3 and main", len(cs))
	}
	run := func(_ context.Context, c Case, rep int) (*report.Comparison, error) {
		cmp := &report.Comparison{LowerBoundS: 10}
		for i, p := range c.Policies {
			cmp.Results = append(cmp.Results, metrics(p, float64(30+10*i+rep), 4, 4, 0))
		}
		return cmp, nil
	}
	var ran []string
	first := Run(context.Background(), cs, Config{Run: func(ctx context.Context, c Case, rep int) (*report.Comparison, error) {
		ran = append(ran, c.Name)
		return run(ctx, c, rep)
	}})
	if len(ran) != 6 || first.Partial() {
		t.Fatalf("first run replayed %v (partial %v), want 3 cases twice", ran, first.Partial())
	}
	// Through the results file, as tenon bench --resume reads it.
	var b bytes.Buffer
	if err := WriteJSON(&b, Meta{Name: "r", Commit: "abc"}, first); err != nil {
		t.Fatal(err)
	}
	meta, back, err := ReadJSONMeta(&b)
	if err != nil || meta.Commit != "abc" {
		t.Fatalf("ReadJSONMeta: %v, commit %q", err, meta.Commit)
	}
	done := back.Outcomes
	done[1].Err = errFake            // static-3 failed: replayed
	done[0].WorkflowsDigest = "beef" // static-2 of other workflows: replayed
	ran, checkpoints := nil, 0
	res := Run(context.Background(), cs, Config{Done: done, AfterCase: func(r *Results) { checkpoints++ },
		Run: func(ctx context.Context, c Case, rep int) (*report.Comparison, error) {
			ran = append(ran, c.Name)
			return run(ctx, c, rep)
		}})
	if want := []string{cs[0].Name, cs[0].Name, cs[1].Name, cs[1].Name}; !slices.Equal(ran, want) {
		t.Errorf("resumed run replayed %v, want %v (the main case taken)", ran, want)
	}
	if checkpoints != 3 {
		t.Errorf("AfterCase called %d times, want 3", checkpoints)
	}
	main := res.Outcomes[2]
	if !main.Resumed || main.Err != nil || len(main.Reps) != 2 || len(main.Case.Workflows) == 0 {
		t.Errorf("main case %+v: want taken from the first run with its 2 reps and this run's workflows", main)
	}
	if res.Outcomes[0].Resumed || res.Outcomes[1].Resumed {
		t.Error("a replayed case is marked resumed")
	}
	b.Reset()
	if err := WriteJSON(&b, Meta{Name: "r"}, res); err != nil {
		t.Fatal(err)
	}
	again, err := ReadJSON(&b)
	if err != nil {
		t.Fatal(err)
	}
	if !again.Outcomes[2].Resumed || again.Outcomes[2].WorkflowsDigest != WorkflowsDigest(cs[2].Workflows) || again.Outcomes[0].Resumed {
		t.Errorf("the JSON does not keep which case was resumed and its workflows' digest: %+v", again.Outcomes[2])
	}
	// Fewer repetitions than asked: replayed.
	cs3 := slices.Clone(cs)
	for i := range cs3 {
		cs3[i].Reps = 3
	}
	ran = nil
	Run(context.Background(), cs3, Config{Done: res.Outcomes, Run: func(ctx context.Context, c Case, rep int) (*report.Comparison, error) {
		ran = append(ran, c.Name)
		return run(ctx, c, rep)
	}})
	if len(ran) != 9 {
		t.Errorf("with 3 reps asked and 2 done, %d replays, want all 9", len(ran))
	}
}

// TestRunGoesOnMidCase: a run stopped in a case (interrupted, or killed
// after the checkpoint of a repetition) is resumed from the repetitions
// that case completed, on the same machine only; the checkpoints in
// between say the case is unfinished and the results partial.
func TestRunGoesOnMidCase(t *testing.T) {
	m := sweepMatrix()
	m.Only, m.Reps = []string{GroupMain}, 3
	m.Policies = []string{"eager", "tenon"}
	cs := mustCases(t, m)
	if len(cs) != 1 {
		t.Fatalf("%d cases, want the main one", len(cs))
	}
	clk := clocktest.NewManual(time.Unix(0, 0))
	run := func(_ context.Context, c Case, rep int) (*report.Comparison, error) {
		clk.Advance(time.Minute)
		cmp := &report.Comparison{LowerBoundS: 10}
		for i, p := range c.Policies {
			cmp.Results = append(cmp.Results, metrics(p, float64(30+10*i+rep), 4, 4, 0))
		}
		return cmp, nil
	}
	through := func(r *Results) []Outcome { // as tenon bench --resume reads a results file
		t.Helper()
		var b bytes.Buffer
		if err := WriteJSON(&b, Meta{Name: "r"}, r); err != nil {
			t.Fatal(err)
		}
		back, err := ReadJSON(&b)
		if err != nil {
			t.Fatal(err)
		}
		return back.Outcomes
	}
	// Interrupted in the second repetition: the first one is complete.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var checkpoints []*Results
	first := Run(ctx, cs, Config{Clock: clk, Host: "h1", Checkpoint: func(r *Results) { checkpoints = append(checkpoints, r) },
		Run: func(ctx context.Context, c Case, rep int) (*report.Comparison, error) {
			if rep == 1 {
				cancel()
			}
			return run(ctx, c, rep)
		}})
	o := first.Outcomes[0]
	if !first.Interrupted || o.Complete != 1 || len(o.Reps) != 2 || !errors.Is(o.Err, context.Canceled) {
		t.Fatalf("interrupted run: %d reps, %d complete, err %v; want 2 reps, the first complete, and the interruption", len(o.Reps), o.Complete, o.Err)
	}
	if len(checkpoints) != 2 {
		t.Fatalf("%d checkpoints, want one after the first repetition and one after the case", len(checkpoints))
	}
	inFlight := checkpoints[0]
	if f := inFlight.Outcomes[0]; !errors.Is(f.Err, ErrUnfinished) || f.Complete != 1 || !inFlight.Partial() || inFlight.Finished() != 0 {
		t.Errorf("checkpoint after the first repetition: %d complete, err %v (partial %v), want the case unfinished with 1 complete", f.Complete, f.Err, inFlight.Partial())
	}
	if back := through(inFlight)[0]; !errors.Is(back.Err, ErrUnfinished) || back.Err.Error() != inFlight.Outcomes[0].Err.Error() {
		t.Errorf("the checkpoint's case reads back with err %v, want it unfinished as written", back.Err)
	}
	for _, tc := range []struct {
		name string
		done []Outcome
	}{
		{"interrupted", through(first)},
		{"killed after the first repetition's checkpoint", through(inFlight)},
	} {
		var reps []int
		var kept []int // complete reps of the case in each checkpoint
		res := Run(context.Background(), cs, Config{Clock: clk, Host: "h1", Done: tc.done,
			Checkpoint: func(r *Results) { kept = append(kept, r.Outcomes[0].Complete) },
			Run: func(ctx context.Context, c Case, rep int) (*report.Comparison, error) {
				reps = append(reps, rep)
				return run(ctx, c, rep)
			}})
		if !slices.Equal(kept, []int{1, 2, 3}) {
			// The first before any replay: a run killed in its first
			// repetition must not lose the earlier one.
			t.Errorf("%s: checkpoints kept %v complete repetitions, want 1 (before replaying), 2, 3", tc.name, kept)
		}
		o := res.Outcomes[0]
		if !slices.Equal(reps, []int{1, 2}) || o.Err != nil || o.Complete != 3 || len(o.Reps) != 3 || o.ResumedReps != 1 || o.Resumed || res.Partial() {
			t.Errorf("%s: replayed reps %v, outcome of %d reps (%d complete, %d resumed, resumed whole %v), err %v; want 1 and 2 replayed after the earlier first",
				tc.name, reps, len(o.Reps), o.Complete, o.ResumedReps, o.Resumed, o.Err)
		}
		if tenon, _ := o.Comparison.Policy("tenon"); tenon.MakespanS != 41 || tenon.Reps != 3 {
			t.Errorf("%s: tenon median %v over %d, want 41 over 3", tc.name, tenon.MakespanS, tenon.Reps)
		}
		if o.Wall < 3*time.Minute {
			t.Errorf("%s: wall %v, want the earlier run's time in it too", tc.name, o.Wall)
		}
		if back := through(res)[0]; back.ResumedReps != 1 || back.Complete != 3 {
			t.Errorf("%s: the JSON keeps resumed reps %d, complete %d", tc.name, back.ResumedReps, back.Complete)
		}
	}
	// Another machine: the case replays whole.
	var reps []int
	Run(context.Background(), cs, Config{Clock: clk, Host: "h2", Done: through(first),
		Run: func(ctx context.Context, c Case, rep int) (*report.Comparison, error) {
			reps = append(reps, rep)
			return run(ctx, c, rep)
		}})
	if !slices.Equal(reps, []int{0, 1, 2}) {
		t.Errorf("on another host replayed reps %v, want all three", reps)
	}
}
