package report

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"math"
	"reflect"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tenon-dev/tenon/internal/live"
	"github.com/tenon-dev/tenon/internal/policy"
	"github.com/tenon-dev/tenon/internal/replay"
	"github.com/tenon-dev/tenon/internal/sandbox/fake"
	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/units"
)

var inf = math.Inf(1)

func TestPercentile(t *testing.T) {
	tests := []struct {
		name string
		xs   []float64
		p    float64
		want float64
	}{
		{name: "empty", xs: nil, p: 50, want: 0},
		{name: "one", xs: []float64{7}, p: 95, want: 7},
		{name: "median odd", xs: []float64{3, 1, 2}, p: 50, want: 2},
		{name: "median even", xs: []float64{4, 1, 3, 2}, p: 50, want: 2.5},
		{name: "p95 interpolates", xs: []float64{0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100}, p: 95, want: 95},
		{name: "max", xs: []float64{5, 9, 1}, p: 100, want: 9},
		{name: "below the unfinished", xs: []float64{inf, 1, 2, 3}, p: 50, want: 2.5},
		{name: "towards the unfinished", xs: []float64{inf, 1, 2, 3}, p: 95, want: inf},
		{name: "on the unfinished", xs: []float64{inf, inf, 1}, p: 50, want: inf},
		{name: "exactly on a finite rank", xs: []float64{inf, 1, 2}, p: 50, want: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Percentile(tt.xs, tt.p); got != tt.want && math.Abs(got-tt.want) > 1e-9 {
				t.Errorf("Percentile(%v, %g) = %g, want %g", tt.xs, tt.p, got, tt.want)
			}
		})
	}
}

// result builds a Result with the given workflow latencies (seconds);
// negative latencies mark failed workflows.
func result(policy string, makespan float64, lat ...float64) *replay.Result {
	r := &replay.Result{Policy: policy, Budget: units.GiB, Makespan: time.Duration(makespan * float64(time.Second)), PeakBytes: units.GiB / 2}
	for i, l := range lat {
		w := replay.WorkflowResult{ID: fmt.Sprint(i), Attempts: 1, Completed: l >= 0}
		if l < 0 {
			w.Attempts, w.OOMs, w.Err = 2, 2, "gave up"
			l = -l
		}
		w.Latency = time.Duration(l * float64(time.Second))
		r.Workflows = append(r.Workflows, w)
	}
	r.Tally()
	return r
}

func TestSummarize(t *testing.T) {
	tests := []struct {
		name string
		res  *replay.Result
		want Metrics
	}{
		{name: "every workflow completed", res: result("p", 100, 10, 20, 30, 90), want: Metrics{
			Policy: "p", MakespanS: 100, P50S: 25, P95S: 81, PeakBytes: units.GiB / 2,
			Attempts: 4, Workflows: 4, Completed: 4, RunS: 100, GoodputPerHour: 4 * 36, PeakOverBudget: 0.5,
		}},
		// The failed workflow ranks last, as an infinite latency: the
		// median moves up and P95 falls on it.
		{name: "one unfinished", res: result("p", 100, 10, 20, 30, -90), want: Metrics{
			Policy: "p", MakespanS: DNF, P50S: 25, P95S: DNF, PeakBytes: units.GiB / 2, OOMEvents: 2,
			Attempts: 5, FailedAttempts: 2, Workflows: 4, Completed: 3, Unfinished: 1, Failed: 1,
			RunS: 100, GoodputPerHour: 3 * 36, AttemptFailureRate: 0.4, PeakOverBudget: 0.5,
		}},
		// A policy that fails its slow half cannot look fast: its median is
		// dnf, where over completed workflows alone it would be 12.5 s.
		{name: "slow half unfinished", res: result("p", 40, 10, 15, -30, -40), want: Metrics{
			Policy: "p", MakespanS: DNF, P50S: DNF, P95S: DNF, PeakBytes: units.GiB / 2, OOMEvents: 4,
			Attempts: 6, FailedAttempts: 4, Workflows: 4, Completed: 2, Unfinished: 2, Failed: 2,
			RunS: 40, GoodputPerHour: 2 * 90, AttemptFailureRate: 4.0 / 6, PeakOverBudget: 0.5,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := Summarize(tt.res)
			m.P95S = Seconds(math.Round(float64(m.P95S)*1e6) / 1e6) // interpolation error; +Inf stays
			if m != tt.want {
				t.Errorf("Summarize =\n%+v\nwant\n%+v", m, tt.want)
			}
		})
	}
}

func workload() []trajectory.Workflow {
	mk := func(id string, peak float64) trajectory.Workflow {
		return trajectory.Workflow{Version: trajectory.Version, ID: id, Actions: []trajectory.Action{
			{Wait: 2, Class: "test", Command: "pytest", Mem: &trajectory.MemProfile{PeakMiB: peak, RampS: 1, HoldS: 4}},
			{Wait: 1, Class: "build", Command: "make", Mem: &trajectory.MemProfile{PeakMiB: peak / 2, RampS: 1, HoldS: 2}},
		}}
	}
	return []trajectory.Workflow{mk("a", 600), mk("b", 600), mk("c", 600), mk("d", 300)}
}

func TestCompare(t *testing.T) {
	wfs := workload()
	c := Compare(wfs, units.GiB, 0.5, result("static-1", 40, 10, 20), result("eager", 80, 10, 20), result("gate", 30, 10, -20))
	if want := 2100.0 / 1024; math.Abs(c.Oversubscription-want) > 1e-9 {
		t.Errorf("oversubscription = %g, want %g", c.Oversubscription, want)
	}
	// scaled: longest alone = (2+5+1+3)*0.5 = 5.5 s; area = 2100 MiB × (1/2+4 + (1/2+2)/2) s = 12075 MiB·s,
	// *0.5 / 1024 MiB = 5.90 s after the first wait, 2*0.5 = 1 s
	if want := 1 + 12075.0*0.5/1024; math.Abs(c.LowerBoundS-want) > 1e-9 {
		t.Errorf("lower bound = %g, want %g", c.LowerBoundS, want)
	}
	if got := c.Results[0].SpeedupVsEager; got != 2 {
		t.Errorf("static-1 speedup vs eager = %g, want 2", got)
	}
	if got := c.Results[1].SpeedupVsEager; got != 1 {
		t.Errorf("eager speedup vs eager = %g, want 1", got)
	}
	if got, want := c.Results[0].OverLowerBound, 40/c.LowerBoundS; math.Abs(got-want) > 1e-9 {
		t.Errorf("makespan / bound = %g, want %g", got, want)
	}
	// gate ended sooner but gave up on a workflow: no speedup, no bound ratio.
	if g := c.Results[2]; g.SpeedupVsEager != 0 || g.VsEagerDidNotFinish != "gate did not finish 1 of 2" || g.OverLowerBound != 0 {
		t.Errorf("gate = %+v, want no ratio and did not finish 1 of 2", g)
	}
}

func TestJSONContract(t *testing.T) {
	c := Compare(workload(), units.GiB, 1, result("eager", 80, 10, -20))
	var buf bytes.Buffer
	if err := WriteJSON(&buf, c); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"budget_bytes", "oversubscription", "lower_bound_s", "results"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("top level lacks %q: %s", k, buf.String())
		}
	}
	res, _ := doc["results"].([]any)
	if len(res) != 1 {
		t.Fatalf("results = %v, want one", doc["results"])
	}
	row := res[0].(map[string]any)
	for _, k := range []string{"policy", "makespan_s", "p50_s", "p95_s", "peak_bytes", "oom_events", "timeouts", "attempts", "failed_attempts", "workflows", "completed", "unfinished", "run_s", "goodput_per_h", "attempt_failure_rate"} {
		if _, ok := row[k]; !ok {
			t.Errorf("result lacks %q", k)
		}
	}
	if row["policy"] != "eager" || row["workflows"] != 2.0 || row["completed"] != 1.0 || row["budget_bytes"] != nil {
		t.Errorf("result row = %v", row)
	}
	if doc["budget_bytes"] != float64(units.GiB) {
		t.Errorf("budget_bytes = %v", doc["budget_bytes"])
	}
}

func TestTable(t *testing.T) {
	tests := []struct {
		name    string
		results []*replay.Result
		want    []string
		lines   int
	}{
		{name: "every run finished", results: []*replay.Result{result("eager", 80, 10, 20), result("static-2", 40, 10, 20)},
			want: []string{"eager", "static-2", "2.00x", "1.00x", "1.00 GiB", "512.0 MiB", "80.0 s", "90.0/h", "180.0/h", "2/2"}, lines: 5},
		// Eager gave up on a workflow: its makespan is dnf and no ratio is
		// printed against it; the footnote says what dnf means.
		{name: "eager did not finish", results: []*replay.Result{result("eager", 80, 10, -20), result("static-2", 40, 10, 20)},
			want: []string{"dnf", "eager did not finish 1 of 2", "40.0 s", "45.0/h", "66.7%", "1/2", "2/2", "dnf: did not finish"}, lines: 9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Compare(workload(), units.GiB, 1, tt.results...)
			var buf bytes.Buffer
			if err := WriteTable(&buf, c); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			for _, s := range tt.want {
				if !strings.Contains(out, s) {
					t.Errorf("table lacks %q:\n%s", s, out)
				}
			}
			if strings.Contains(out, "2.00x") && strings.Contains(tt.name, "did not finish") {
				t.Errorf("table has a ratio against a run that did not finish:\n%s", out)
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if len(lines) != tt.lines {
				t.Fatalf("table has %d lines, want %d:\n%s", len(lines), tt.lines, out)
			}
			if len(lines[2]) != len(lines[3]) || len(lines[3]) != len(lines[4]) {
				t.Errorf("rows not aligned:\n%s", out)
			}
		})
	}
}

func TestSpeedup(t *testing.T) {
	done := func(p string, s Seconds) Metrics {
		return Metrics{Policy: p, MakespanS: s, RunS: float64(s), Workflows: 12, Completed: 12}
	}
	dnf := func(p string, run float64, left int) Metrics {
		return Metrics{Policy: p, MakespanS: DNF, RunS: run, Workflows: 12, Completed: 12 - left, Unfinished: left}
	}
	tests := []struct {
		name    string
		m, base Metrics
		ratio   float64
		dnf     string
	}{
		{name: "both finished", m: done("tenon", 20), base: done("eager", 50), ratio: 2.5},
		{name: "base gave up early", m: done("tenon", 60), base: dnf("eager", 30, 5), dnf: "eager did not finish 5 of 12"},
		{name: "m gave up", m: dnf("tenon", 20, 1), base: done("eager", 50), dnf: "tenon did not finish 1 of 12"},
		{name: "neither finished", m: dnf("tenon", 20, 1), base: dnf("eager", 30, 5), dnf: "tenon did not finish 1 of 12; eager did not finish 5 of 12"},
		{name: "itself, unfinished", m: dnf("eager", 30, 5), base: dnf("eager", 30, 5), dnf: "eager did not finish 5 of 12"},
		{name: "unknown makespan", m: done("tenon", 0), base: done("eager", 50)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, d := Speedup(tt.m, tt.base)
			if math.Abs(r-tt.ratio) > 1e-9 || d != tt.dnf {
				t.Errorf("Speedup = %g, %q; want %g, %q", r, d, tt.ratio, tt.dnf)
			}
			want := tt.dnf
			if want == "" {
				want = Ratio(tt.ratio)
			}
			if got := VersusText(r, d); got != want {
				t.Errorf("VersusText = %q, want %q", got, want)
			}
		})
	}
}

// TestSecondsJSON: a dnf makespan or percentile is null in JSON, with the
// unfinished count beside it, and reads back as DNF.
func TestSecondsJSON(t *testing.T) {
	c := Compare(workload(), units.GiB, 1, result("eager", 80, 10, -20), result("static-2", 40, 10, 20))
	var buf bytes.Buffer
	if err := WriteJSON(&buf, c); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`"makespan_s": null`, `"p95_s": null`, `"unfinished": 1`, `"run_s": 80`, `"vs_eager_did_not_finish": "eager did not finish 1 of 2"`, `"makespan_s": 40`} {
		if !strings.Contains(buf.String(), s) {
			t.Errorf("JSON lacks %s:\n%s", s, buf.String())
		}
	}
	if strings.Contains(buf.String(), "speedup_vs_eager\"") {
		t.Errorf("JSON has a speedup against a run that did not finish:\n%s", buf.String())
	}
	var back Comparison
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if m := back.Results[0]; m.MakespanS.Finite() || m.P50S.Finite() || m.P95S.Finite() || m.Unfinished != 1 {
		t.Errorf("read back %+v, want dnf makespan and percentiles, 1 unfinished", m)
	}
	if m := back.Results[1]; m.MakespanS != 40 {
		t.Errorf("read back makespan %v, want 40", m.MakespanS)
	}
}

// replayBoth runs eager and static-1 on the fake backend and returns their
// results.
func replayBoth(t *testing.T) []*replay.Result {
	var out []*replay.Result
	for _, name := range []string{"eager", "static-1"} {
		synctest.Test(t, func(t *testing.T) {
			be := fake.New(fake.Options{Budget: units.GiB})
			defer be.Close()
			p, err := live.Build(name, policy.Options{}, live.Options{})
			if err != nil {
				t.Fatal(err)
			}
			res, err := replay.Run(context.Background(), replay.Config{
				Workflows: workload(), Backend: be, Policy: p, Budget: units.GiB, Domain: be, TimeScale: 0.5,
			})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, res)
		})
	}
	return out
}

func TestPlot(t *testing.T) {
	results := replayBoth(t)
	c := Compare(workload(), units.GiB, 0.5, results...)
	var buf bytes.Buffer
	if err := WritePlot(&buf, c); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&buf)
	if err != nil {
		t.Fatalf("plot is not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() < 500 || b.Dy() < 500 {
		t.Errorf("plot is %v, want at least 500x500", b)
	}
}

// TestResidencyReport: a policy whose run has lifecycle counters gets the
// residency summary, in the JSON and as a table of its own; a policy
// without them gets neither.
func TestResidencyReport(t *testing.T) {
	want := replay.ResidencyStats{Boundaries: 2, Restartable: 1, Teardowns: 1, Rematerializations: 1,
		BytesCaptured: units.MiB, StateBytes: 4 * units.MiB, MemoryReclaimed: 8 * units.MiB, OverheadS: 0.75}
	done := []replay.WorkflowResult{{ID: "w", Completed: true, End: 5 * time.Second, Latency: 5 * time.Second}}
	results := []*replay.Result{
		{Policy: "tenon", Budget: units.GiB, Makespan: 5 * time.Second, Residency: want, Workflows: done},
		{Policy: "eager", Budget: units.GiB, Makespan: 5 * time.Second, Workflows: done},
	}
	for _, r := range results {
		r.Tally()
	}
	c := Compare(nil, units.GiB, 1, results...)
	tenon, eager := c.Results[0], c.Results[1]
	if eager.Residency != nil {
		t.Errorf("eager residency = %+v, want none", eager.Residency)
	}
	r := tenon.Residency
	if r == nil {
		t.Fatal("tenon has no residency summary")
	}
	if !reflect.DeepEqual(r.ResidencyStats, want) || r.RestartableShare != 0.5 {
		t.Errorf("residency = %+v, want %+v and share 0.5", *r, want)
	}
	var buf bytes.Buffer
	if err := WriteTable(&buf, c); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	_, after, ok := strings.Cut(out, "\nresidency\n")
	if !ok || !strings.Contains(after, "50.0%") || !strings.Contains(after, "8.0 MiB") || strings.Contains(after, "eager") {
		t.Errorf("table lacks the residency section for tenon alone:\n%s", out)
	}
	buf.Reset()
	if err := WriteJSON(&buf, c); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"restartable_share": 0.5`) || !strings.Contains(buf.String(), `"teardowns": 1`) {
		t.Errorf("JSON lacks the residency summary:\n%s", buf.String())
	}
}

// TestInfeasibleLeftOut: infeasible workflows are counted apart and left out
// of the makespan, the percentiles and "did not finish".
func TestInfeasibleLeftOut(t *testing.T) {
	res := result("tenon", 10, 4, 6)
	res.Workflows = append(res.Workflows, replay.WorkflowResult{ID: "big", Infeasible: true})
	res.Infeasible = 1
	m := Summarize(res)
	if m.Infeasible != 1 || m.Unfinished != 0 || !m.MakespanS.Finite() || !m.P95S.Finite() {
		t.Fatalf("metrics %+v: want 1 infeasible, nothing unfinished, a makespan", m)
	}
	if got := Done(m); got != "2/2 (+1 infeasible)" {
		t.Errorf("Done = %q", got)
	}
	var b strings.Builder
	if err := WriteTable(&b, &Comparison{Results: []Metrics{m}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "infeasible: 1 of 3 workflows") {
		t.Errorf("table lacks the infeasible line:\n%s", b.String())
	}
}
