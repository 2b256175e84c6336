package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/predict"
	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/workload"
)

type testEnv struct {
	cliEnv
	out, errOut bytes.Buffer
}

func newTestEnv() *testEnv {
	e := &testEnv{}
	e.cliEnv = cliEnv{stdout: &e.out, stderr: &e.errOut, log: slog.New(slog.DiscardHandler)}
	return e
}

// writeWorkload writes a small generated swe workload with recorded
// measurements and returns its path and workflows.
func writeWorkload(t *testing.T) (string, []trajectory.Workflow) {
	t.Helper()
	wfs, err := workload.Generate("swe", 30, 1, workload.Options{})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "swe.jsonl")
	var buf bytes.Buffer
	if err := trajectory.Write(&buf, wfs); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, wfs
}

func TestPredictTrainSavesLoadableModel(t *testing.T) {
	wl, _ := writeWorkload(t)
	tests := []struct {
		name, features string
	}{
		{"current", predict.FeatureSetCurrent},
		{"static", predict.FeatureSetStatic},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newTestEnv()
			model := filepath.Join(t.TempDir(), "model.json")
			err := runPredictTrain(context.Background(), &env.cliEnv,
				[]string{"--workload", wl, "--features", tc.features, "-o", model})
			if err != nil {
				t.Fatalf("train: %v (stderr %s)", err, env.errOut.String())
			}
			m, err := predict.Load(model)
			if err != nil {
				t.Fatalf("saved model does not load: %v", err)
			}
			if m.FeatureSet != tc.features {
				t.Errorf("feature set %q, want %q", m.FeatureSet, tc.features)
			}
			for _, want := range []string{"examples", "tasks", "MAE", model} {
				if !strings.Contains(env.errOut.String(), want) {
					t.Errorf("summary %q lacks %q", env.errOut.String(), want)
				}
			}
		})
	}
}

func TestPredictTrainErrors(t *testing.T) {
	wl, _ := writeWorkload(t)
	dir := t.TempDir()
	tests := []struct {
		name string
		args []string
		want string // substring of the error or stderr
	}{
		{"no output", []string{"--workload", wl}, "-o FILE is required"},
		{"no inputs", []string{"-o", filepath.Join(dir, "m.json")}, "no inputs"},
		{"bad features", []string{"--workload", wl, "--features", "magic", "-o", filepath.Join(dir, "m.json")}, "magic"},
		{"missing workload", []string{"--workload", filepath.Join(dir, "nope.jsonl"), "-o", filepath.Join(dir, "m.json")}, "nope.jsonl"},
		{"bad val", []string{"--workload", wl, "--val", "1.5", "-o", filepath.Join(dir, "m.json")}, "--val"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newTestEnv()
			err := runPredictTrain(context.Background(), &env.cliEnv, tc.args)
			if err == nil {
				t.Fatal("want an error")
			}
			if msg := err.Error() + env.errOut.String(); !strings.Contains(msg, tc.want) {
				t.Errorf("error %q (stderr %q) does not mention %q", err, env.errOut.String(), tc.want)
			}
		})
	}
}

// evalJSON runs predict eval --json and decodes the output generically.
func evalJSON(t *testing.T, args ...string) map[string][]map[string]any {
	t.Helper()
	env := newTestEnv()
	if err := runPredictEval(context.Background(), &env.cliEnv, append([]string{"--json"}, args...)); err != nil {
		t.Fatalf("eval: %v (stderr %s)", err, env.errOut.String())
	}
	var out map[string][]map[string]any
	if err := json.Unmarshal(env.out.Bytes(), &out); err != nil {
		t.Fatalf("eval output is not the expected JSON: %v\n%s", err, env.out.String())
	}
	return out
}

func TestPredictEvalJSON(t *testing.T) {
	wl, _ := writeWorkload(t)
	model := filepath.Join(t.TempDir(), "model.json")
	if err := runPredictTrain(context.Background(), &newTestEnv().cliEnv, []string{"--workload", wl, "-o", model}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
	}{
		{"trained", []string{"--workload", wl}},
		{"saved model", []string{"--workload", wl, "--model", model}},
	}
	wantKeys := []string{"heavy_precision", "heavy_recall", "mae_mib", "n", "name", "p90_ape"}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := evalJSON(t, tc.args...)
			var top []string
			for k := range out {
				top = append(top, k)
			}
			slices.Sort(top)
			if !slices.Equal(top, []string{"predictors", "predictors_at_256mib"}) {
				t.Fatalf("top-level keys %v", top)
			}
			for list, ps := range out {
				var names []string
				for _, p := range ps {
					var keys []string
					for k := range p {
						keys = append(keys, k)
					}
					slices.Sort(keys)
					if !slices.Equal(keys, wantKeys) {
						t.Errorf("%s entry keys %v, want %v", list, keys, wantKeys)
					}
					if n, _ := p["n"].(float64); n <= 0 {
						t.Errorf("%s %v: n = %v, want validation examples", list, p["name"], p["n"])
					}
					names = append(names, p["name"].(string))
				}
				if !slices.Equal(names, []string{"static", "history-only", "current"}) {
					t.Errorf("%s names %v", list, names)
				}
			}
		})
	}
	// The saved model was trained on the same split with the same seed, so
	// it must score exactly like the freshly trained current predictor.
	a, b := evalJSON(t, "--workload", wl), evalJSON(t, "--workload", wl, "--model", model)
	if a["predictors"][2]["mae_mib"] != b["predictors"][2]["mae_mib"] {
		t.Errorf("saved model MAE %v, trained %v", b["predictors"][2]["mae_mib"], a["predictors"][2]["mae_mib"])
	}
}

func TestPredictEvalTable(t *testing.T) {
	wl, _ := writeWorkload(t)
	env := newTestEnv()
	if err := runPredictEval(context.Background(), &env.cliEnv, []string{"--workload", wl}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(env.out.String(), "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("want a header and 3 rows, got:\n%s", env.out.String())
	}
	for i, name := range []string{"static", "history-only", "current"} {
		if f := strings.Fields(lines[i+1]); len(f) == 0 || f[0] != name {
			t.Errorf("row %d = %q, want predictor %s", i+1, lines[i+1], name)
		}
	}
	if !strings.Contains(lines[0], "256MiB") {
		t.Errorf("header %q lacks the 256MiB columns", lines[0])
	}
}

func TestPredictEvalBadModel(t *testing.T) {
	wl, _ := writeWorkload(t)
	dir := t.TempDir()
	corrupt := filepath.Join(dir, "corrupt.json")
	if err := os.WriteFile(corrupt, []byte(`{"format": "tenon-predict", "vers`), 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other.json")
	if err := os.WriteFile(other, []byte(`{"format": "something-else"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	static := filepath.Join(dir, "static.json")
	if err := runPredictTrain(context.Background(), &newTestEnv().cliEnv,
		[]string{"--workload", wl, "--features", "static", "-o", static}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path string
		is         error
		want       string
	}{
		{"corrupt", corrupt, predict.ErrModelFormat, "corrupt"},
		{"wrong format", other, predict.ErrModelFormat, "something-else"},
		{"missing", filepath.Join(dir, "missing.json"), os.ErrNotExist, "missing.json"},
		{"static model", static, nil, "feature set"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newTestEnv()
			err := runPredictEval(context.Background(), &env.cliEnv, []string{"--workload", wl, "--model", tc.path, "--json"})
			if err == nil {
				t.Fatal("want an error")
			}
			if !strings.Contains(err.Error(), tc.path) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q should name %s and mention %q", err, tc.path, tc.want)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %v is not %v", err, tc.is)
			}
			if env.out.Len() != 0 {
				t.Errorf("output despite the error: %s", env.out.String())
			}
		})
	}
}

func jsonLines(t *testing.T, evs []controller.Event) string {
	t.Helper()
	var b strings.Builder
	for _, ev := range evs {
		line, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.String()
}

func TestParseEventLog(t *testing.T) {
	done := func(wf string, attempt, action int, end, dur float64, peak int64) controller.Event {
		return controller.Event{T: end, Kind: controller.EventActionDone, Workflow: wf, Attempt: attempt,
			Action: controller.IntPtr(action), Class: "test", Command: "pytest", AvgBytes: peak / 2,
			PeakBytes: peak, DurationS: dur}
	}
	oom := done("w", 0, 1, 9, 1, 5<<20)
	oom.OOM = true
	tests := []struct {
		name string
		log  string
		want []predict.ActionRecord
		err  string
	}{
		{
			name: "offsets from the attempt's first event",
			log: jsonLines(t, []controller.Event{
				{T: 1, Kind: controller.EventRunStart},
				{T: 10, Kind: controller.EventSubmit, Workflow: "w"},
				done("w", 0, 0, 14, 2, 8<<20),
				done("w", 0, 1, 20, 3, 16<<20),
			}),
			want: []predict.ActionRecord{
				{Event: "action_done", WorkflowID: "w", Index: 0, Class: "test", Command: "pytest",
					AvgBytes: 4 << 20, PeakBytes: 8 << 20, DurationS: 2, StartS: 2, EndS: 4},
				{Event: "action_done", WorkflowID: "w", Index: 1, Class: "test", Command: "pytest",
					AvgBytes: 8 << 20, PeakBytes: 16 << 20, DurationS: 3, StartS: 7, EndS: 10},
			},
		},
		{
			name: "only the last attempt, no OOM-killed action",
			log: jsonLines(t, []controller.Event{
				{T: 5, Kind: controller.EventSubmit, Workflow: "w"},
				done("w", 0, 0, 7, 1, 1<<20),
				oom,
				{T: 12, Kind: controller.EventAgentStart, Workflow: "w", Attempt: 1},
				done("w", 1, 0, 15, 1, 2<<20),
			}),
			want: []predict.ActionRecord{
				{Event: "action_done", WorkflowID: "w", Index: 0, Class: "test", Command: "pytest",
					AvgBytes: 1 << 20, PeakBytes: 2 << 20, DurationS: 1, StartS: 2, EndS: 3},
			},
		},
		{
			name: "attempt suffix is stripped",
			log:  jsonLines(t, []controller.Event{done("task.attempt_2", 0, 0, 3, 1, 1<<20)}),
			want: []predict.ActionRecord{
				{Event: "action_done", WorkflowID: "task", Index: 0, Class: "test", Command: "pytest",
					AvgBytes: 1 << 19, PeakBytes: 1 << 20, DurationS: 1, StartS: 0, EndS: 1},
			},
		},
		{name: "bad line", log: "{\"kind\":\"submit\"}\n\n{oops\n", err: "line 3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseEventLog(strings.NewReader(tc.log))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one mentioning %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("records\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestPredictTrainFromEvents(t *testing.T) {
	_, wfs := writeWorkload(t)
	// A replay-like event log: actions back to back from t=0 per workflow.
	var evs []controller.Event
	for _, wf := range wfs {
		t0 := 0.0
		evs = append(evs, controller.Event{T: t0, Kind: controller.EventSubmit, Workflow: wf.ID})
		for i, a := range wf.Actions {
			if a.Recorded == nil {
				continue
			}
			t0 += a.Wait + a.Recorded.DurationS
			evs = append(evs, controller.Event{T: t0, Kind: controller.EventActionDone, Workflow: wf.ID,
				Action: controller.IntPtr(i), Class: a.Class, Command: a.Command,
				AvgBytes: int64(a.Recorded.AvgMiB * (1 << 20)), PeakBytes: int64(a.Recorded.PeakMiB * (1 << 20)),
				DurationS: a.Recorded.DurationS})
		}
	}
	dir := t.TempDir()
	log := filepath.Join(dir, "events.jsonl")
	if err := os.WriteFile(log, []byte(jsonLines(t, evs)), 0o644); err != nil {
		t.Fatal(err)
	}
	env := newTestEnv()
	model := filepath.Join(dir, "model.json")
	if err := runPredictTrain(context.Background(), &env.cliEnv, []string{"--events", log, "-o", model}); err != nil {
		t.Fatalf("train: %v (stderr %s)", err, env.errOut.String())
	}
	if _, err := predict.Load(model); err != nil {
		t.Fatal(err)
	}
	out := evalJSON(t, "--events", log)
	if n := out["predictors"][0]["n"].(float64); n <= 0 {
		t.Errorf("no validation examples from the event log")
	}
}

func TestImageBuildNamesUnreachableSocket(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "tenon-test-cmd-docker.sock") // nothing listens here
	t.Setenv("DOCKER_HOST", "unix://"+sock)
	env := newTestEnv()
	err := runImageBuild(context.Background(), &env.cliEnv, []string{"--docker", "--state-dir", t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), sock) {
		t.Fatalf("error %v, want one naming the socket %s", err, sock)
	}
}

// writeRenamed writes wfs with every workflow id prefixed, as another
// trace set would name its tasks.
func writeRenamed(t *testing.T, wfs []trajectory.Workflow, prefix string) string {
	t.Helper()
	out := make([]trajectory.Workflow, len(wfs))
	for i, w := range wfs {
		w.ID = prefix + w.ID
		out[i] = w
	}
	var buf bytes.Buffer
	if err := trajectory.Write(&buf, out); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), prefix+"swe.jsonl")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestPredictEvalHeldOut(t *testing.T) {
	wl, wfs := writeWorkload(t)
	model := filepath.Join(t.TempDir(), "model.json")
	if err := runPredictTrain(context.Background(), &newTestEnv().cliEnv,
		[]string{"--workload", wl, "--val", "0.3", "-o", model}); err != nil {
		t.Fatal(err)
	}
	other := writeRenamed(t, wfs, "other-")
	tests := []struct {
		name                 string
		test                 string
		tasks, leftOut, base int
	}{
		// The same file: the 21 tasks the model saw are left out, the
		// baselines are fitted on exactly those.
		{"held-out split", wl, 9, 21, 21},
		// Another set: every task is new.
		{"other set", other, 30, 0, 21},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newTestEnv()
			err := runPredictEval(context.Background(), &env.cliEnv,
				[]string{"--model", model, "--train", wl, "--test", tc.test, "--json", "--budgets", "1GiB,8GiB"})
			if err != nil {
				t.Fatalf("eval: %v (stderr %s)", err, env.errOut.String())
			}
			var rep heldOutReport
			if err := json.Unmarshal(env.out.Bytes(), &rep); err != nil {
				t.Fatal(err)
			}
			if rep.Tasks != tc.tasks || rep.LeftOut != tc.leftOut || rep.TrainTasks != tc.base {
				t.Errorf("test tasks %d, left out %d, baseline tasks %d; want %d, %d, %d",
					rep.Tasks, rep.LeftOut, rep.TrainTasks, tc.tasks, tc.leftOut, tc.base)
			}
			var names []string
			for _, p := range rep.Predictors {
				names = append(names, p.Name)
			}
			if want := []string{"static", "history-only", "current", "static-p90", "current-p90"}; !slices.Equal(names, want) {
				t.Errorf("predictors %v, want %v", names, want)
			}
			if len(rep.P90Coverage) != len(rep.Predictors) || len(rep.Admission) != 2 ||
				rep.Admission[0].Threshold != 128<<20 || len(rep.Thresholds) != 4 || len(rep.Classes) == 0 {
				t.Errorf("report shape: %d predictors, %d budgets (first line %d), %d thresholds, %d classes",
					len(rep.Predictors), len(rep.Admission), rep.Admission[0].Threshold, len(rep.Thresholds), len(rep.Classes))
			}
		})
	}
	env := newTestEnv()
	if err := runPredictEval(context.Background(), &env.cliEnv, []string{"--model", model, "--train", wl, "--test", other}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"30 tasks", "admission: budget", "class", "128.0 MiB"} {
		if !strings.Contains(env.out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, env.out.String())
		}
	}
}

func TestPredictEvalHeldOutErrors(t *testing.T) {
	wl, wfs := writeWorkload(t)
	dir := t.TempDir()
	model := filepath.Join(dir, "model.json")
	if err := runPredictTrain(context.Background(), &newTestEnv().cliEnv,
		[]string{"--workload", wl, "--val", "0", "-o", model}); err != nil {
		t.Fatal(err)
	}
	other := writeRenamed(t, wfs, "other-")
	empty := filepath.Join(dir, "empty.jsonl")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no model", []string{"--train", wl, "--test", other}, "--model"},
		{"no train", []string{"--model", model, "--test", other}, "--train"},
		{"train without test", []string{"--model", model, "--train", wl}, "--test"},
		{"missing model", []string{"--model", filepath.Join(dir, "nope.json"), "--train", wl, "--test", other}, "nope.json"},
		{"missing test", []string{"--model", model, "--train", wl, "--test", filepath.Join(dir, "gone")}, "gone"},
		{"empty test", []string{"--model", model, "--train", wl, "--test", empty}, "empty.jsonl"},
		{"all tasks seen", []string{"--model", model, "--train", wl, "--test", wl}, "no actions left"},
		{"train is not the model's", []string{"--model", model, "--train", other, "--test", wl}, "none of the 30 tasks"},
		{"bad budget", []string{"--model", model, "--train", wl, "--test", other, "--budgets", "lots"}, "--budgets"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newTestEnv()
			err := runPredictEval(context.Background(), &env.cliEnv, tc.args)
			if err == nil {
				t.Fatal("want an error")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not mention %q", err, tc.want)
			}
			if env.out.Len() != 0 {
				t.Errorf("output despite the error: %s", env.out.String())
			}
		})
	}
}
