package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tenon-dev/tenon/internal/app"
	"github.com/tenon-dev/tenon/internal/bench"
	"github.com/tenon-dev/tenon/internal/report"
	"github.com/tenon-dev/tenon/internal/units"
)

func TestBenchFlagErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string // in the error or stderr
	}{
		{"bad budget", []string{"--budgets", "1GiB,lots"}, `"lots" is not a positive size`},
		{"zero budget", []string{"--budgets", "0"}, "not a positive size"},
		{"unknown workload", []string{"--workloads", "swe,web"}, `unknown workload "web"`},
		{"unknown group", []string{"--only", "mains"}, `unknown group "mains"`},
		{"unknown policy", []string{"--policies", "eager,tenno"}, `"tenno"`},
		{"bad static N", []string{"--policies", "static-x"}, "static-x"},
		{"zero time scale", []string{"--time-scale", "0"}, "--time-scale must be positive"},
		{"zero traces length", []string{"--traces-length", "0s"}, "--traces-length 0s: want a positive duration"},
		{"zero workflows", []string{"--n", "0"}, "--n must be positive"},
		{"zero repetitions", []string{"--reps", "0"}, "--reps must be positive"},
		{"name with a directory", []string{"--name", "a/b"}, "--name"},
		{"unknown backend", []string{"--backend", "xen"}, `--backend "xen"`},
		{"missing trace directory", []string{"--traces", "/nonexistent/tenon-test-bench"}, "--traces"},
		{"traces group without trace sets", []string{"--only", "traces", "--trace-sets", "/nonexistent/tenon-test-traces"}, "/nonexistent/tenon-test-traces does not exist; point --trace-sets"},
		{"traces as workload without directory", []string{"--workloads", "traces"}, "needs a trace directory"},
		{"stray argument", []string{"now"}, `unexpected argument "now"`},
		{"unknown flag", []string{"--fast"}, "flag provided but not defined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newTestEnv()
			out := filepath.Join(t.TempDir(), "out")
			err := runBench(context.Background(), &env.cliEnv, append([]string{"--out-dir", out, "--state-dir", t.TempDir()}, tt.args...))
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error() + env.errOut.String()
			if !strings.Contains(msg, tt.want) {
				t.Errorf("error %q (stderr %q) lacks %q", err, env.errOut.String(), tt.want)
			}
			if _, statErr := os.Stat(out); !errors.Is(statErr, os.ErrNotExist) {
				t.Errorf("bad input created the out dir (stat: %v)", statErr)
			}
		})
	}
}

func TestBenchDryRun(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		contains  []string
		wantCases int
	}{
		{"full matrix", nil, []string{"static/swe/1GiB/N=2", "main/swe/1GiB", "main/swe/2GiB", "ablation/swe/1GiB", "load/swe/1GiB/n=8", "region/swe/1GiB/0.25", "static-best", "estimated", "main/swe-real/1GiB", "ablation/swe-real/1GiB"}, 22},
		{"every budget", []string{"--every-budget", "--only", "main"}, []string{"main/swe-duplicate/2GiB", "main/rl/1.5GiB", "main/swe-real/2GiB"}, 15},
		{"quick", []string{"--quick"}, []string{"main/swe/1GiB", "eager,tenon"}, 1},
		{"only region, custom budget", []string{"--only", "region", "--budgets", "768MiB"}, []string{"region/swe/768MiB/0.05"}, 5},
		{"policies override", []string{"--only", "main", "--workloads", "rl", "--budgets", "1GiB", "--policies", "eager,static-2"}, []string{"main/rl/1GiB", "eager,static-2"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newTestEnv()
			out := filepath.Join(t.TempDir(), "out")
			if err := runBench(context.Background(), &env.cliEnv, append([]string{"--dry-run", "--out-dir", out}, tt.args...)); err != nil {
				t.Fatalf("dry run: %v (%s)", err, env.errOut.String())
			}
			for _, s := range tt.contains {
				if !strings.Contains(env.out.String(), s) {
					t.Errorf("output lacks %q:\n%s", s, env.out.String())
				}
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("dry run wrote to the out dir (stat: %v)", err)
			}
			env = newTestEnv()
			if err := runBench(context.Background(), &env.cliEnv, append([]string{"--dry-run", "--json"}, tt.args...)); err != nil {
				t.Fatal(err)
			}
			var plan struct {
				Cases []struct {
					Name             string  `json:"name"`
					Workflows        int     `json:"workflows"`
					Oversubscription float64 `json:"oversubscription"`
				} `json:"cases"`
				EstimateS float64 `json:"estimate_s"`
			}
			if err := json.Unmarshal(env.out.Bytes(), &plan); err != nil {
				t.Fatalf("decoding plan: %v", err)
			}
			if len(plan.Cases) != tt.wantCases || plan.EstimateS <= 0 {
				t.Errorf("%d cases, estimate %g s; want %d cases", len(plan.Cases), plan.EstimateS, tt.wantCases)
			}
			for _, c := range plan.Cases {
				if c.Workflows == 0 || c.Oversubscription <= 0 {
					t.Errorf("case %+v", c)
				}
			}
		})
	}
}

// TestBenchTracesLength: --traces-length sets how long the longest
// real-length workflow replays, so a longer one compresses less (down to
// --time-scale), and the default keeps bench.TracesMaxLength.
func TestBenchTracesLength(t *testing.T) {
	scale := func(args ...string) float64 {
		t.Helper()
		env := newTestEnv()
		args = append([]string{"--dry-run", "--json", "--only", "main", "--workloads", "swe-real", "--budgets", "1GiB", "--reps", "1"}, args...)
		if err := runBench(context.Background(), &env.cliEnv, args); err != nil {
			t.Fatalf("%v: %v (%s)", args, err, env.errOut.String())
		}
		var plan struct {
			Cases []struct {
				TimeScale float64 `json:"time_scale"`
			} `json:"cases"`
		}
		if err := json.Unmarshal(env.out.Bytes(), &plan); err != nil || len(plan.Cases) != 1 {
			t.Fatalf("plan %s: %v", env.out.String(), err)
		}
		return plan.Cases[0].TimeScale
	}
	def, half := scale(), scale("--traces-length", "30s")
	if math.Abs(half-def/2) > 1e-9*def {
		t.Errorf("time scale %g at 30s, want half the default's %g", half, def)
	}
	if got := scale("--traces-length", "24h", "--time-scale", "0.5"); got != 0.5 {
		t.Errorf("time scale %g with a day's length, want --time-scale's 0.5", got)
	}
}

// TestBenchDryRunReps: the estimate of a dry run counts every repetition:
// the full matrix thrice by default, --quick once, and --reps overrides.
func TestBenchDryRunReps(t *testing.T) {
	estimate := func(args ...string) (float64, []int) {
		t.Helper()
		env := newTestEnv()
		if err := runBench(context.Background(), &env.cliEnv, append([]string{"--dry-run", "--json"}, args...)); err != nil {
			t.Fatalf("%v: %v (%s)", args, err, env.errOut.String())
		}
		var plan struct {
			Cases []struct {
				Reps int `json:"repetitions"`
			} `json:"cases"`
			EstimateS float64 `json:"estimate_s"`
		}
		if err := json.Unmarshal(env.out.Bytes(), &plan); err != nil {
			t.Fatal(err)
		}
		var reps []int
		for _, c := range plan.Cases {
			reps = append(reps, c.Reps)
		}
		return plan.EstimateS, reps
	}
	three, reps3 := estimate("--only", "main")
	one, reps1 := estimate("--only", "main", "--reps", "1")
	if math.Abs(three-3*one) > 1e-6*three || reps3[0] != 3 || reps1[0] != 1 {
		t.Errorf("estimate %g s at reps %v, %g s at reps %v; want three times", three, reps3, one, reps1)
	}
	quick, repsQ := estimate("--quick")
	quick5, repsQ5 := estimate("--quick", "--reps", "5")
	if math.Abs(quick5-5*quick) > 1e-6*quick5 || repsQ[0] != 1 || repsQ5[0] != 5 {
		t.Errorf("quick estimate %g s at reps %v, %g s at reps %v; want five times", quick, repsQ, quick5, repsQ5)
	}
	env := newTestEnv()
	if err := runBench(context.Background(), &env.cliEnv, []string{"--dry-run", "--quick", "--reps", "2"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(env.out.String(), "1 cases, 4 replays") {
		t.Errorf("dry run does not count 2 reps of 2 policies as 4 replays:\n%s", env.out.String())
	}
}

// TestBenchReplot: --replot redraws the plots of a results JSON next to it
// and runs nothing; a missing or foreign file is an error naming it.
func TestBenchReplot(t *testing.T) {
	dir := t.TempDir()
	cmp := func(pols ...string) *report.Comparison {
		c := &report.Comparison{Oversubscription: 9, LowerBoundS: 10}
		for i, p := range pols {
			c.Results = append(c.Results, report.Metrics{Policy: p, MakespanS: report.Seconds(10 + i), RunS: float64(10 + i), Workflows: 4, Completed: 4})
		}
		return c
	}
	res := &bench.Results{Cases: 3, Outcomes: []bench.Outcome{
		{Case: bench.Case{Name: "main/swe/1GiB", Group: bench.GroupMain, Workload: "swe", Budget: units.GiB, Headline: true}, Comparison: cmp("eager", "tenon")},
		{Case: bench.Case{Name: "main/rl/1GiB", Group: bench.GroupMain, Workload: "rl", Budget: units.GiB}, Comparison: cmp("eager", "tenon")},
		{Case: bench.Case{Name: "ablation/swe/1GiB", Group: bench.GroupAblation, Workload: "swe", Budget: units.GiB}, Comparison: cmp("tenon-no-gate")},
	}}
	path := filepath.Join(dir, "run1.json")
	var b bytes.Buffer
	if err := bench.WriteJSON(&b, bench.Meta{Name: "run1"}, res); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	env := newTestEnv()
	if err := runBench(context.Background(), &env.cliEnv, []string{"--replot", path}); err != nil {
		t.Fatalf("%v (stderr %s)", err, env.errOut.String())
	}
	for _, plot := range []string{"run1-workloads.png", "run1-ablation.png"} {
		data, err := os.ReadFile(filepath.Join(dir, plot))
		if err != nil || !bytes.HasPrefix(data, []byte("\x89PNG")) {
			t.Errorf("%s: not a PNG (%v)", plot, err)
		}
		if !strings.Contains(env.out.String(), plot) {
			t.Errorf("output %q does not name %s", env.out.String(), plot)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "run1.md")); !os.IsNotExist(err) {
		t.Errorf("--replot wrote the Markdown (%v); it redraws plots only", err)
	}
	for _, bad := range []string{filepath.Join(dir, "missing.json"), filepath.Join(dir, "run1-workloads.png")} {
		env := newTestEnv()
		err := runBench(context.Background(), &env.cliEnv, []string{"--replot", bad})
		if err == nil || !strings.Contains(err.Error(), filepath.Base(bad)) {
			t.Errorf("--replot %s: %v, want an error naming it", bad, err)
		}
	}
}

// TestBenchSim: --sim runs the cases on the simulated host, without root
// or sandboxes, and writes the results files as a live run does.
func TestBenchSim(t *testing.T) {
	env := newTestEnv()
	out := filepath.Join(t.TempDir(), "out")
	if err := runBench(context.Background(), &env.cliEnv, []string{"--quick", "--sim", "--out-dir", out, "--state-dir", "/nonexistent"}); err != nil {
		t.Fatalf("bench --sim: %v (%s)", err, env.errOut.String())
	}
	f, err := os.Open(filepath.Join(out, "bench-quick.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := bench.ReadJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	if h := res.Headline(); h == nil || h.Err != nil || len(h.Comparison.Results) != 2 {
		t.Errorf("headline %+v, want eager and tenon simulated", h)
	}
	md, err := os.ReadFile(filepath.Join(out, "bench-quick.md"))
	if err != nil || !strings.Contains(string(md), "backend: sim") {
		t.Errorf("the Markdown does not name the sim backend (%v)", err)
	}
	if !strings.Contains(env.out.String(), "tenon completes every workflow") {
		t.Errorf("no goals in the summary:\n%s", env.out.String())
	}
}

// TestBenchResume: --resume takes the complete cases of an earlier run of
// the same command and commit, clean trees, and replays the rest; another
// command, a missing file or a commit other than this binary's is an
// error naming what differs.
func TestBenchResume(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	args := []string{"--quick", "--sim", "--out-dir", out, "--state-dir", "/nonexistent"}
	env := newTestEnv()
	if err := runBench(context.Background(), &env.cliEnv, args); err != nil {
		t.Fatalf("bench --sim: %v (%s)", err, env.errOut.String())
	}
	path := filepath.Join(out, "bench-quick.json")
	// Other packages' live tests turn zram on and off while this runs
	// (go test runs packages at once): compare hosts without their swap.
	sansSwap := func(h string) string {
		for _, s := range []string{", no swap", ", swap "} {
			if i := strings.Index(h, s); i >= 0 {
				return h[:i]
			}
		}
		return h
	}
	if m := app.Machine(); sansSwap(app.HostOf(m)) != sansSwap(app.Host()) {
		t.Errorf("HostOf(%q) = %q, want %q", m, app.HostOf(m), app.Host())
	}
	if f, err := os.Open(path); err != nil {
		t.Fatal(err)
	} else {
		_, first, err := bench.ReadJSONMeta(f)
		f.Close()
		if err != nil || len(first.Outcomes) == 0 || sansSwap(first.Outcomes[0].Host) != sansSwap(app.Host()) {
			t.Fatalf("the case's host reads back as %+v (%v), want %q", first, err, app.Host())
		}
	}
	// The resume writes elsewhere: where results go is not part of what
	// a run measures (sameMeasurement).
	out2 := filepath.Join(t.TempDir(), "out2")
	args2 := []string{"--quick", "--sim", "--out-dir", out2, "--state-dir", "/nonexistent"}
	env = newTestEnv()
	err := runBench(context.Background(), &env.cliEnv, append(slices.Clone(args2), "--resume", path))
	if app.GitDirty() {
		// Both runs were made from this working tree: a dirty one may
		// not be resumed (its results would name a commit that did not
		// make them).
		if err == nil || !strings.Contains(err.Error(), "clean tree") {
			t.Errorf("resume from a dirty tree: %v, want refused", err)
		}
	} else {
		if err != nil {
			t.Fatalf("--resume: %v (%s)", err, env.errOut.String())
		}
		if !strings.Contains(env.errOut.String(), "taken from the earlier run") || strings.Contains(env.errOut.String(), "simulating") {
			t.Errorf("the case was not taken from the earlier run:\n%s", env.errOut.String())
		}
		md, err := os.ReadFile(filepath.Join(out2, "bench-quick.md"))
		if err != nil || !strings.Contains(string(md), "- resumed: the run started") || !strings.Contains(string(md), "): 1 of 1 cases taken from it") {
			t.Errorf("the Markdown does not say it resumed (%v)", err)
		}
		resumeMidCase(t)
	}
	env = newTestEnv()
	err = runBench(context.Background(), &env.cliEnv, append(slices.Clone(args), "--n", "6", "--resume", path))
	if err == nil || !strings.Contains(err.Error(), "same flags") {
		t.Errorf("resume with other flags: %v, want refused", err)
	}
	err = runBench(context.Background(), &env.cliEnv, append(slices.Clone(args), "--resume", filepath.Join(out, "missing.json")))
	if err == nil || !strings.Contains(err.Error(), "missing.json") {
		t.Errorf("resume from a missing file: %v, want an error naming it", err)
	}
	meta := bench.Meta{Command: "tenon bench --quick", Commit: "0123abc"}
	if err := app.CheckResume(meta, "4567def", false, meta.Command); err == nil || !strings.Contains(err.Error(), "0123abc") {
		t.Errorf("CheckResume across commits: %v, want refused naming the file's commit", err)
	}
	if err := app.CheckResume(meta, meta.Commit, false, meta.Command); err != nil {
		t.Errorf("CheckResume, same commit and command: %v", err)
	}
	for _, in := range [][]string{{"--resume", "x.json", "--n", "4"}, {"--n", "4", "-resume=x.json"}, {"--resume=x.json", "--n", "4"}} {
		if got := dropFlag(in, "resume"); !slices.Equal(got, []string{"--n", "4"}) {
			t.Errorf("dropFlag(%q) = %q", in, got)
		}
	}
}

// resumeMidCase: a run stopped in a case after its first of two
// repetitions goes on from the second.
func resumeMidCase(t *testing.T) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	args := []string{"--quick", "--sim", "--reps", "2", "--out-dir", out, "--state-dir", "/nonexistent"}
	env := newTestEnv()
	if err := runBench(context.Background(), &env.cliEnv, args); err != nil {
		t.Fatalf("bench --sim --reps 2: %v (%s)", err, env.errOut.String())
	}
	// As a run interrupted in its second repetition leaves it.
	path := filepath.Join(out, "bench-quick.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	c := doc["cases"].([]any)[0].(map[string]any)
	c["error"], c["complete_reps"], doc["partial"] = "repetition 2 of 2: interrupted: context canceled", 1, true
	if b, err = json.Marshal(doc); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	env = newTestEnv()
	if err := runBench(context.Background(), &env.cliEnv, append(slices.Clone(args), "--resume", path)); err != nil {
		t.Fatalf("--resume mid-case: %v (%s)", err, env.errOut.String())
	}
	if n := strings.Count(env.errOut.String(), "simulating"); n != 1 {
		t.Errorf("the resumed case simulated %d times, want once (its second repetition):\n%s", n, env.errOut.String())
	}
	md, err := os.ReadFile(filepath.Join(out, "bench-quick.md"))
	if err != nil || !strings.Contains(string(md), "went on from the repetitions it had completed") || !strings.Contains(string(md), "which made the first 1") {
		t.Errorf("the Markdown does not say the case went on from its first repetition (%v):\n%s", err, md)
	}
}

func TestSameMeasurement(t *testing.T) {
	for _, args := range [][]string{{"--n", "4"}, {"--name", "it's", "--traces", "a b", ""}, {"--x", `a\b`, "'"}} {
		if got := splitQuoted(quoteArgs(args)); !slices.Equal(got, args) {
			t.Errorf("splitQuoted(quoteArgs(%q)) = %q", args, got)
		}
	}
	base := "tenon bench --name s --out-dir /a --events-dir /e"
	for _, c := range []struct {
		b    string
		same bool
	}{
		{"tenon bench --name s --out-dir /b", true},
		{"tenon bench --name s --out-dir=/b --events-dir /f", true},
		{"tenon bench --name s", true},
		{"tenon bench --name t --out-dir /a --events-dir /e", false},
		{"tenon bench --name s --reps 1 --out-dir /a", false},
		{"tenon bench --name 's' --out-dir '/a b'", true},
	} {
		if got := sameMeasurement(base, c.b); got != c.same {
			t.Errorf("sameMeasurement(%q, %q) = %v, want %v", base, c.b, got, c.same)
		}
	}
}
