package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/predict"
	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/trajectory/agentcgroup"
	"github.com/tenon-dev/tenon/internal/units"
)

func init() {
	register(&command{name: "predict train", summary: "train the memory predictor on recorded measurements and save the model", run: runPredictTrain})
	register(&command{name: "predict eval", summary: "compare the static, history-only and current predictors on a validation split or a held-out test set", run: runPredictEval})
}

// predictInputsHelp explains the inputs shared by predict train and eval.
const predictInputsHelp = `Inputs (any mix, at least one): --workload trajectory files whose actions
carry recorded measurements, --traces an AgentCgroup trace directory, and
--events tenon replay event logs (JSONL). From an event log only completed
"action_done" events of each workflow's last attempt are used (OOM-killed and
timed-out actions are skipped); their avg_bytes and peak_bytes are the
sandbox's absolute memory as measured and are used as recorded (not rebased
to the level before the action). Examples are split by task (all actions of
a workflow on one side; ".attempt_N" suffixes count as the same task).`

// predictInputs are the flags naming training data and the split.
type predictInputs struct {
	workloads, events listFlag
	traces            string
	val               float64
	seed              uint64
}

func addPredictInputs(fs *flag.FlagSet) *predictInputs {
	in := &predictInputs{}
	fs.Var(&in.workloads, "workload", "trajectory file with recorded measurements (repeatable, comma lists allowed)")
	fs.StringVar(&in.traces, "traces", "", "AgentCgroup trace directory")
	fs.Var(&in.events, "events", "tenon replay event log, JSONL (repeatable, comma lists allowed)")
	fs.Float64Var(&in.val, "val", 0.2, "share of tasks held out for validation")
	fs.Uint64Var(&in.seed, "seed", 1, "seed of the task split and of training")
	return in
}

// splitExamples loads every input and splits the examples by task.
func (in *predictInputs) splitExamples() (train, val []predict.Example, tasks int, err error) {
	if len(in.workloads.items) == 0 && in.traces == "" && len(in.events.items) == 0 {
		return nil, nil, 0, errors.New("no inputs: give --workload, --traces or --events")
	}
	if in.val < 0 || in.val >= 1 {
		return nil, nil, 0, fmt.Errorf("--val %g: want a share in [0, 1)", in.val)
	}
	var all []predict.Example
	for _, path := range in.workloads.items {
		wfs, err := trajectory.LoadFile(path)
		if err != nil {
			return nil, nil, 0, err
		}
		all = append(all, predict.ExamplesFromWorkflows(taskIDs(wfs))...)
	}
	if in.traces != "" {
		wfs, _, err := agentcgroup.Import(in.traces)
		if err != nil {
			return nil, nil, 0, err
		}
		all = append(all, predict.ExamplesFromWorkflows(taskIDs(wfs))...)
	}
	for _, path := range in.events.items {
		recs, err := readEventLog(path)
		if err != nil {
			return nil, nil, 0, err
		}
		// One file at a time: the same workflow id in two runs is the
		// same task but not one history.
		all = append(all, predict.ExamplesFromRecords(recs)...)
	}
	if len(all) == 0 {
		return nil, nil, 0, errors.New("the inputs hold no recorded measurements")
	}
	seen := map[string]bool{}
	for _, e := range all {
		seen[e.Ctx.WorkflowID] = true
	}
	train, val = predict.SplitByTask(all, in.val, in.seed)
	if len(train) == 0 {
		return nil, nil, 0, fmt.Errorf("%d tasks leave none for training with --val %g", len(seen), in.val)
	}
	return train, val, len(seen), nil
}

// taskOf strips an importer's ".attempt_N" suffix so attempts of one task
// land on the same side of the split.
func taskOf(id string) string {
	if i := strings.LastIndex(id, ".attempt_"); i > 0 {
		return id[:i]
	}
	return id
}

func taskIDs(wfs []trajectory.Workflow) []trajectory.Workflow {
	for i := range wfs {
		wfs[i].ID = taskOf(wfs[i].ID)
	}
	return wfs
}

func readEventLog(path string) ([]predict.ActionRecord, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading event log: %w", err)
	}
	defer f.Close()
	recs, err := parseEventLog(f)
	if err != nil {
		return nil, fmt.Errorf("event log %s: %w", path, err)
	}
	return recs, nil
}

// parseEventLog turns the action_done events of a replay event log into
// predictor records: only each workflow's last attempt, without OOM-killed
// or timed-out actions. Offsets are relative to the attempt's first event.
func parseEventLog(r io.Reader) ([]predict.ActionRecord, error) {
	type key struct {
		wf      string
		attempt int
	}
	var dones []controller.Event
	first := map[key]float64{}
	last := map[string]int{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for line := 1; sc.Scan(); line++ {
		b := sc.Bytes()
		if len(strings.TrimSpace(string(b))) == 0 {
			continue
		}
		var ev controller.Event
		if err := json.Unmarshal(b, &ev); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		if ev.Workflow == "" {
			continue
		}
		k := key{ev.Workflow, ev.Attempt}
		start := ev.T
		if ev.Kind == controller.EventActionDone {
			start = ev.T - ev.DurationS
		}
		if t, ok := first[k]; !ok || start < t {
			first[k] = start
		}
		last[ev.Workflow] = max(last[ev.Workflow], ev.Attempt)
		if ev.Kind == controller.EventActionDone && ev.Action != nil && !ev.OOM && !ev.TimedOut {
			dones = append(dones, ev)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	var recs []predict.ActionRecord
	for _, ev := range dones {
		if ev.Attempt != last[ev.Workflow] {
			continue
		}
		t0 := first[key{ev.Workflow, ev.Attempt}]
		recs = append(recs, predict.ActionRecord{Event: predict.EventActionDone,
			WorkflowID: taskOf(ev.Workflow), Index: *ev.Action, Class: ev.Class, Command: ev.Command,
			AvgBytes: ev.AvgBytes, PeakBytes: ev.PeakBytes, DurationS: ev.DurationS,
			StartS: ev.T - ev.DurationS - t0, EndS: ev.T - t0})
	}
	return recs, nil
}

func runPredictTrain(_ context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "predict train", "",
		"Train the memory predictor on recorded measurements and save the model.",
		predictInputsHelp+`

The model is trained on the training split; the validation MAE of its peak
predictions is printed to stderr with the example and task counts.

A current model predicts a re-run at least at the median peak of the latest
three runs of the same command in the task (same class and program skeleton:
"python -m pytest a.py" and "python -m pytest b.py -k x" are one command).

Every model also carries a calibration fitted on the training tasks alone
(5 folds by task): a forest that predicts how far the peak forest misses an
action, the 90th percentile of the misses divided by it (the upper quantile
PredP90, pred_p90_bytes: about nine peaks in ten at or below it on tasks the
model never saw).

Features: the action's class and command, the task's history (last, max and
trend of the peaks, counts of earlier peaks at or above 64 and 256 MiB, time
since the start and since the last action) and what the sandbox held before
the action (the recorded before_mib the trace importer writes; tenon's own
event log and the daemon do not record it yet, so there it is unknown).`)
	in := addPredictInputs(fs)
	features := fs.String("features", predict.FeatureSetCurrent, "feature set: current (with task history) or static")
	out := fs.String("o", "", "model file to write (required)")
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	if *out == "" || *out == "-" {
		fmt.Fprintln(env.stderr, "tenon predict train: -o FILE is required")
		return errUsage
	}
	train, val, tasks, err := in.splitExamples()
	if err != nil {
		return err
	}
	m, err := predict.Train(train, predict.TrainConfig{FeatureSet: *features, Seed: in.seed})
	if err != nil {
		return err
	}
	if err := m.Save(*out); err != nil {
		return err
	}
	mae := "n/a (no validation tasks)"
	if len(val) > 0 {
		mae = fmt.Sprintf("%.1f MiB", predict.Evaluate(m, val, 0).MAEMiB)
	}
	fmt.Fprintf(env.stderr, "trained %s model on %d examples (%d validation) from %d tasks; validation peak MAE %s; saved %s\n",
		m.FeatureSet, len(train), len(val), tasks, mae, *out)
	return nil
}

// evalReport is the JSON output of predict eval.
type evalReport struct {
	Predictors []predict.Metrics `json:"predictors"`           // at --heavy
	At256MiB   []predict.Metrics `json:"predictors_at_256mib"` // at 256MiB
}

func runPredictEval(_ context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "predict eval", "",
		"Compare the static, history-only and current predictors on a validation split.",
		predictInputsHelp+`

Static and current are trained on the training split (or --model is
evaluated as "current"); all three are scored on the validation split: peak
MAE (MiB), 90th-percentile absolute percentage error, and precision and
recall of "heavy" (peak above --heavy, and above 256MiB in a second list).

With --test DIR|FILE, --model is scored on data it never saw: the test
set's tasks that the model was trained on (the model file lists them) are
left out, and the static and history-only baselines are fitted on the
model's training tasks in --train DIR|FILE (the --workload, --traces,
--events and --val flags are not used). The report gives the Table 2
metrics, precision and recall at each of --thresholds, admission's view at
each of --budgets (an action is queued as heavy when its predicted peak is at
least budget/8 or its heavy risk at least 0.5; recall counts actions whose
peak is at least budget/8), and the peak MAE per action class. A DIR is an
AgentCgroup trace directory; a FILE a trajectory file or a replay event log.
For a held-out split of one trace set, train on it with --val and score on
the same directory:

  tenon predict train --traces T --val 0.2 -o M
  tenon predict eval --model M --train T --test T`)
	in := addPredictInputs(fs)
	held := addHeldOutFlags(fs)
	modelPath := fs.String("model", "", "evaluate this saved model as the current predictor instead of training one")
	heavy := units.Size(predict.DefaultHeavyThreshold)
	fs.Var(&heavy, "heavy", "peak above which an action is heavy")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	if held.test != "" {
		return runHeldOut(env, held, *modelPath, in.seed, *asJSON)
	}
	if held.train != "" {
		return errors.New("--train is the model's training data for --test: give --test too, or use --workload, --traces or --events")
	}
	if heavy <= 0 {
		return fmt.Errorf("--heavy %s: want a positive size", units.FormatSize(int64(heavy)))
	}
	var loaded *predict.Model
	if *modelPath != "" {
		m, err := predict.Load(*modelPath)
		if err != nil {
			return err
		}
		if m.FeatureSet != predict.FeatureSetCurrent {
			return fmt.Errorf("model file %s: feature set %q, but --model replaces the %q predictor: train it with --features %s",
				*modelPath, m.FeatureSet, predict.FeatureSetCurrent, predict.FeatureSetCurrent)
		}
		loaded = m
	}
	train, val, _, err := in.splitExamples()
	if err != nil {
		return err
	}
	if len(val) == 0 {
		return fmt.Errorf("no validation examples: raise --val (now %g) or add tasks", in.val)
	}
	preds, err := evalPredictors(train, in.seed, loaded)
	if err != nil {
		return err
	}
	const mib = 1 << 20
	var rep evalReport
	for _, p := range preds {
		rep.Predictors = append(rep.Predictors, named(predict.Evaluate(p.pred, val, int64(heavy)), p.name))
		rep.At256MiB = append(rep.At256MiB, named(predict.Evaluate(p.pred, val, 256*mib), p.name))
	}
	if *asJSON {
		enc := json.NewEncoder(env.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	tw := tabwriter.NewWriter(env.stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "predictor\tn\tMAE MiB\tP90 APE %%\tprec@%s\trecall@%s\tprec@256MiB\trecall@256MiB\t\n",
		units.FormatSize(int64(heavy)), units.FormatSize(int64(heavy)))
	for i, m := range rep.Predictors {
		m2 := rep.At256MiB[i]
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t\n",
			m.Name, m.N, m.MAEMiB, m.P90APE, m.HeavyPrecision, m.HeavyRecall, m2.HeavyPrecision, m2.HeavyRecall)
	}
	return tw.Flush()
}

type namedPredictor struct {
	name string
	pred predict.Predictor
}

// evalPredictors returns static, history-only and current, trained on
// train; loaded, when given, replaces the trained current model.
func evalPredictors(train []predict.Example, seed uint64, loaded *predict.Model) ([]namedPredictor, error) {
	static, err := predict.Train(train, predict.TrainConfig{FeatureSet: predict.FeatureSetStatic, Seed: seed})
	if err != nil {
		return nil, fmt.Errorf("training static predictor: %w", err)
	}
	current := loaded
	if current == nil {
		if current, err = predict.Train(train, predict.TrainConfig{FeatureSet: predict.FeatureSetCurrent, Seed: seed}); err != nil {
			return nil, fmt.Errorf("training current predictor: %w", err)
		}
	}
	return []namedPredictor{
		{"static", static},
		{"history-only", predict.NewHistoryOnly(train, 0)},
		{"current", current},
	}, nil
}

func named(m predict.Metrics, name string) predict.Metrics {
	m.Name = name
	return m
}
