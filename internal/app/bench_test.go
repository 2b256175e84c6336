package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tenon-dev/tenon/internal/bench"
	"github.com/tenon-dev/tenon/internal/live"
	"github.com/tenon-dev/tenon/internal/units"
)

// TestBenchRun runs a static sweep and a headline case on the fake
// backend: the plan builds every policy but the sweep's best, which is
// resolved and built when its case starts; the results files are written.
func TestBenchRun(t *testing.T) {
	wfs := testWorkflows(t, 2)
	mk := func(name, group string, pols ...string) bench.Case {
		return bench.Case{Name: name, Group: group, Workload: "swe", Workflows: wfs, Budget: units.GiB,
			TimeScale: testScale, Policies: pols, Headline: group == bench.GroupMain}
	}
	cases := []bench.Case{
		mk("static/swe/1GiB/N=1", bench.GroupStatic, "static-1"),
		mk("static/swe/1GiB/N=2", bench.GroupStatic, "static-2"),
		mk("main/swe/1GiB", bench.GroupMain, "eager", bench.BestStatic),
	}
	cases[2].Reps = 2 // the headline case twice, each with a fresh policy and its own event log
	out, state, events := filepath.Join(t.TempDir(), "out"), filepath.Join(t.TempDir(), "state"), filepath.Join(t.TempDir(), "events")
	plan, err := PlanBench(BenchConfig{Cases: cases, Backend: "fake", Domain: "unused", StateDir: state, OutDir: out, EventsDir: events,
		Meta: bench.Meta{Name: "b", Command: "tenon bench", Backend: "fake"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(plan.runs["main/swe/1GiB"]); got != 1 {
		t.Errorf("the plan built %d policies of the headline case, want 1 (eager; the best static comes later)", got)
	}
	run, err := plan.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	res := run.Results
	if len(res.Outcomes) != 3 || res.Partial() {
		t.Fatalf("%d outcomes of %d cases (partial %v)", len(res.Outcomes), res.Cases, res.Partial())
	}
	if res.BestStatic != "static-1" && res.BestStatic != "static-2" {
		t.Errorf("best static %q, want one the sweep ran", res.BestStatic)
	}
	head := res.Headline()
	if head == nil || head.Err != nil || len(head.Comparison.Results) != 2 || head.Comparison.Results[1].Policy != res.BestStatic {
		t.Fatalf("headline %+v, want eager and %s", head, res.BestStatic)
	}
	if m := head.Comparison.Results[0]; len(head.Reps) != 2 || m.Reps != 2 || m.Spread == nil || m.Completed != 2 {
		t.Errorf("headline: %d reps, eager %+v; want the median of 2 with its spread", len(head.Reps), m)
	}
	for _, f := range []string{"main-swe-1GiB-rep1.jsonl", "main-swe-1GiB-rep2.jsonl", "static-swe-1GiB-N=1.jsonl"} {
		if st, err := os.Stat(filepath.Join(events, f)); err != nil || st.Size() == 0 {
			t.Errorf("event log %s: %v", f, err)
		}
	}
	if len(plan.runs) != 0 {
		t.Errorf("the plan still holds the policies of %d cases that ran", len(plan.runs))
	}
	for _, f := range []string{"b.md", "b.json", "b-workloads.png"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("results file %s: %v", f, err)
		}
	}
	if len(run.Files) < 2 || run.Files[0] != filepath.Join(out, "b.md") {
		t.Errorf("files %q, want the Markdown first", run.Files)
	}
	if run.Meta.Machine == "" || run.Meta.Started.IsZero() {
		t.Errorf("meta %+v lacks the machine or the start", run.Meta)
	}
}

// TestPlanBenchBadPolicy: a bad policy in any case fails the plan, naming
// the case, before anything is created.
func TestPlanBenchBadPolicy(t *testing.T) {
	wfs := testWorkflows(t, 2)
	out := filepath.Join(t.TempDir(), "out")
	_, err := PlanBench(BenchConfig{Backend: "fake", OutDir: out, StateDir: filepath.Join(t.TempDir(), "state"), Cases: []bench.Case{
		{Name: "main/swe/1GiB", Group: bench.GroupMain, Workflows: wfs, Budget: units.GiB, TimeScale: 1, Policies: []string{"eager", bench.BestStatic}},
		{Name: "ablation/swe/1GiB", Group: bench.GroupAblation, Workflows: wfs, Budget: units.GiB, TimeScale: 1, Policies: []string{"tenon-no-gaet"}},
	}})
	if err == nil || !strings.Contains(err.Error(), "case ablation/swe/1GiB") || !strings.Contains(err.Error(), "tenon-no-gaet") {
		t.Fatalf("err %v, want one naming the case and the policy", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("planning made the out dir (%v)", err)
	}
}

// TestPlanBenchActuator: the bench freezes unless told; --actuator loads
// the pacer for the live cases' gate policies (unloaded by Close, also
// when planning fails), and the simulated host refuses anything but the
// freezer.
func TestPlanBenchActuator(t *testing.T) {
	wfs := testWorkflows(t, 2)
	old := loadScheduler
	defer func() { loadScheduler = old }()
	loaded, closed := 0, 0
	loadScheduler = func() (live.Pacer, func() error, error) {
		loaded++
		return nopPacer{"schedext"}, func() error { closed++; return nil }, nil
	}
	plan := func(actuator string, sim bool, pols ...string) (*BenchPlan, error) {
		return PlanBench(BenchConfig{Backend: "fake", OutDir: t.TempDir(), StateDir: t.TempDir(), Sim: sim, Actuator: actuator, Cases: []bench.Case{
			{Name: "main/swe/1GiB", Group: bench.GroupMain, Workflows: wfs, Budget: units.GiB, TimeScale: 1, Policies: pols},
		}})
	}
	p, err := plan("", false, "eager", "tenon")
	if err != nil || p.pacing != nil || loaded != 0 {
		t.Fatalf("default: err %v, pacing %v, loaded %d; want the freezer", err, p.pacing, loaded)
	}
	p.Close()
	if p, err = plan("schedext", false, "eager", "tenon"); err != nil || p.pacing == nil || p.pacing.Pacer.Name() != "schedext" {
		t.Fatalf("schedext: err %v, pacing %v", err, p.pacing)
	}
	if r := p.runs["main/swe/1GiB"]["tenon"]; r.pol == nil {
		t.Error("tenon not built")
	}
	p.Close()
	p.Close()
	if loaded != 1 || closed != 1 {
		t.Errorf("loaded %d, closed %d; want once each", loaded, closed)
	}
	if _, err := plan("schedext", false, "tenon", "tenon-no-gaet"); err == nil || closed != 2 {
		t.Errorf("a bad policy: err %v, closed %d; want an error and the scheduler unloaded", err, closed)
	}
	if _, err := plan("schedext", true, "tenon"); err == nil {
		t.Error("the simulated host accepted sched_ext")
	}
	if _, err := plan("quota", false, "tenon"); err == nil {
		t.Error("an unknown actuator was accepted")
	}
}

// TestPlanBenchIdleLoop: --idle-loop is the process backend's; the bench
// refuses it on another backend and on the simulated host before any
// replay, and hands it to every live replay.
func TestPlanBenchIdleLoop(t *testing.T) {
	wfs := testWorkflows(t, 2)
	plan := func(backend string, sim bool) (*BenchPlan, error) {
		return PlanBench(BenchConfig{Backend: backend, OutDir: t.TempDir(), StateDir: t.TempDir(), Sim: sim, IdleLoop: true, Cases: []bench.Case{
			{Name: "main/swe/1GiB", Group: bench.GroupMain, Workflows: wfs, Budget: units.GiB, TimeScale: 1, Policies: []string{"tenon"}},
		}})
	}
	for _, c := range []struct {
		backend string
		sim     bool
		want    string
	}{{"fake", false, "the fake backend has no idle loop"}, {"docker", false, "the docker backend has no idle loop"}, {"process", true, "the simulated host"}} {
		if _, err := plan(c.backend, c.sim); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s (sim %v) with the idle loop: err %v, want one naming %q", c.backend, c.sim, err, c.want)
		}
	}
	if _, _, _, err := openBackend(t.Context(), "fake", t.TempDir(), t.TempDir(), "d", units.GiB, 0, true, discardLog(nil)); err == nil {
		t.Error("openBackend gave the fake backend an idle loop")
	}
	p := &BenchPlan{cfg: BenchConfig{Backend: "process", IdleLoop: true}}
	if rc := p.replayConfig(bench.Case{Name: "c", Workflows: wfs, Budget: units.GiB, TimeScale: 1}, 0, ""); !rc.IdleLoop {
		t.Error("the replays of a bench with the idle loop run without it")
	}
}

func TestCaseEventLog(t *testing.T) {
	tests := []struct {
		name, dir, cas string
		reps, rep      int
		want           string
	}{
		{name: "no directory", dir: "", cas: "main/swe/1GiB", want: ""},
		{name: "slashes become dashes", dir: "ev", cas: "main/swe/1GiB", reps: 1, want: filepath.Join("ev", "main-swe-1GiB.jsonl")},
		{name: "one file per repetition", dir: "ev", cas: "main/swe/1GiB", reps: 3, rep: 1, want: filepath.Join("ev", "main-swe-1GiB-rep2.jsonl")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := caseEventLog(tt.dir, bench.Case{Name: tt.cas, Reps: tt.reps}, tt.rep); got != tt.want {
				t.Errorf("caseEventLog(%q, %q, rep %d of %d) = %q, want %q", tt.dir, tt.cas, tt.rep, tt.reps, got, tt.want)
			}
		})
	}
}

// TestBenchSim runs cases on the simulated host: the workflows name an
// image the process backend lacks and the backend and state directory are
// bogus, none of which matters; the best static is resolved as live, each
// case's comparison carries its time scale, and the results files are
// written.
func TestBenchSim(t *testing.T) {
	wfs, _ := OverrideImage(testWorkflows(t, 4), "swe/not-on-this-host")
	mk := func(name, group string, pols ...string) bench.Case {
		return bench.Case{Name: name, Group: group, Workload: "swe", Workflows: wfs, Budget: units.GiB,
			TimeScale: 0.5, Policies: pols, Headline: group == bench.GroupMain, Reps: 1}
	}
	cases := []bench.Case{
		mk("static/swe/1GiB/N=1", bench.GroupStatic, "static-1"),
		mk("main/swe/1GiB", bench.GroupMain, "eager", bench.BestStatic, "tenon"),
	}
	out := filepath.Join(t.TempDir(), "out")
	plan, err := PlanBench(BenchConfig{Cases: cases, Sim: true, Backend: "process", StateDir: "/nonexistent", OutDir: out,
		Meta: bench.Meta{Name: "b", Command: "tenon bench --sim", Backend: "sim"}})
	if err != nil {
		t.Fatal(err)
	}
	run, err := plan.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	head := run.Results.Headline()
	if head == nil || head.Err != nil || len(head.Comparison.Results) != 3 || head.Comparison.Results[1].Policy != "static-1" {
		t.Fatalf("headline %+v, want eager, static-1, tenon", head)
	}
	if c := head.Comparison; c.TimeScale != 0.5 || c.Results[2].Workflows != 4 || c.Results[2].MakespanS <= 0 {
		t.Errorf("comparison: time scale %g, tenon %+v", c.TimeScale, c.Results[2])
	}
	for _, f := range []string{"b.md", "b.json"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("results file %s: %v", f, err)
		}
	}
	_, err = PlanBench(BenchConfig{Cases: []bench.Case{mk("main/swe/1GiB", bench.GroupMain, "tenno")}, Sim: true, OutDir: out})
	if err == nil || !strings.Contains(err.Error(), "tenno") {
		t.Errorf("bad policy: %v, want an error naming it", err)
	}
}
