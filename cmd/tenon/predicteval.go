package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/tenon-dev/tenon/internal/predict"
	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/trajectory/agentcgroup"
	"github.com/tenon-dev/tenon/internal/units"
)

// heldOut are the flags of predict eval --test: a saved model scored on
// data it never saw.
type heldOut struct {
	test, train         string
	thresholds, budgets *listFlag
}

func addHeldOutFlags(fs *flag.FlagSet) *heldOut {
	h := &heldOut{
		thresholds: newListFlag("32MiB", "128MiB", "256MiB", "1GiB"),
		budgets:    newListFlag("512MiB", "1GiB", "2GiB", "4GiB", "8GiB"),
	}
	fs.StringVar(&h.test, "test", "", "score --model on this trace directory, trajectory file or event log (tasks the model was trained on are left out)")
	fs.StringVar(&h.train, "train", "", "with --test: the data the model was trained on (directory or file), for the static and history-only baselines")
	fs.Var(h.thresholds, "thresholds", "with --test: heavy lines of the precision/recall table (comma list)")
	fs.Var(h.budgets, "budgets", "with --test: admission budgets; admission's heavy line is budget/8 (comma list)")
	return h
}

// heldOutReport is the JSON output of predict eval --test.
type heldOutReport struct {
	Model         string `json:"model"`
	Test          string `json:"test"`
	TrainExamples int    `json:"train_examples"`
	TrainTasks    int    `json:"train_tasks"`
	LeftOut       int    `json:"test_tasks_left_out"` // test tasks the model was trained on
	predict.Scorecard
}

// runHeldOut scores the model at modelPath on h.test against static and
// history-only baselines fitted on the model's own training tasks.
func runHeldOut(env *cliEnv, h *heldOut, modelPath string, seed uint64, asJSON bool) error {
	if modelPath == "" {
		return errors.New("--test scores a saved model: give --model FILE (tenon predict train -o FILE writes one)")
	}
	if h.train == "" {
		return errors.New("--test needs --train DIR|FILE, the data the model was trained on: the static and history-only baselines are fitted on it, never on the test set")
	}
	thresholds, err := sizes(h.thresholds, "--thresholds")
	if err != nil {
		return err
	}
	budgets, err := sizes(h.budgets, "--budgets")
	if err != nil {
		return err
	}
	m, err := predict.Load(modelPath)
	if err != nil {
		return err
	}
	if m.FeatureSet != predict.FeatureSetCurrent {
		return fmt.Errorf("model file %s: feature set %q, but --model replaces the %q predictor: train it with --features %s",
			modelPath, m.FeatureSet, predict.FeatureSetCurrent, predict.FeatureSetCurrent)
	}
	test, err := loadExamples(h.test, "--test")
	if err != nil {
		return err
	}
	train, err := loadExamples(h.train, "--train")
	if err != nil {
		return err
	}
	rep := heldOutReport{Model: modelPath, Test: h.test}
	if len(m.TrainTasks) > 0 {
		var seen, rest []predict.Example
		seen, test = predict.OfTasks(test, m.TrainTasks)
		rep.LeftOut = len(predict.Tasks(seen))
		if train, rest = predict.OfTasks(train, m.TrainTasks); len(train) == 0 {
			return fmt.Errorf("--train %s holds none of the %d tasks model %s was trained on (%d of its tasks are others): give the model's training data",
				h.train, len(m.TrainTasks), modelPath, len(predict.Tasks(rest)))
		}
	} else {
		fmt.Fprintf(env.stderr, "model %s does not list its training tasks (written by an older tenon): baselines are fitted on all of --train, and the test set is not checked against it\n", modelPath)
	}
	if len(test) == 0 {
		return fmt.Errorf("--test %s: no actions left to score (%d tasks left out: the model was trained on them)", h.test, rep.LeftOut)
	}
	rep.TrainExamples, rep.TrainTasks = len(train), len(predict.Tasks(train))
	static, err := predict.Train(train, predict.TrainConfig{FeatureSet: predict.FeatureSetStatic, Seed: seed, HeavyThreshold: m.HeavyThreshold})
	if err != nil {
		return fmt.Errorf("training the static baseline: %w", err)
	}
	preds := []predict.Predictor{static, predict.NewHistoryOnly(train, m.HeavyThreshold), m}
	if m.P90 != nil {
		// The upper quantiles as peaks: what admission charging PredP90
		// would see.
		preds = append(preds, predict.UpperQuantile{P: static}, predict.UpperQuantile{P: m})
	}
	rep.Scorecard = predict.Score(preds, test, predict.ScoreConfig{Thresholds: thresholds, Budgets: budgets})
	if asJSON {
		enc := json.NewEncoder(env.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	return writeHeldOut(env.stdout, rep)
}

func sizes(l *listFlag, what string) ([]int64, error) {
	var out []int64
	for _, s := range l.items {
		n, err := units.ParseSize(s)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%s: %q is not a positive size (e.g. 256MiB)", what, s)
		}
		out = append(out, n)
	}
	return out, nil
}

// loadExamples reads the examples of an AgentCgroup trace directory, a
// trajectory file or a replay event log.
func loadExamples(path, what string) ([]predict.Example, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	var ex []predict.Example
	if st.IsDir() {
		wfs, _, err := agentcgroup.Import(path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		ex = predict.ExamplesFromWorkflows(taskIDs(wfs))
	} else if wfs, terr := trajectory.LoadFile(path); terr == nil {
		ex = predict.ExamplesFromWorkflows(taskIDs(wfs))
	} else {
		recs, err := readEventLog(path)
		if err != nil || len(recs) == 0 {
			return nil, fmt.Errorf("%s %s: neither a trajectory file (%v) nor an event log with action_done events", what, path, terr)
		}
		ex = predict.ExamplesFromRecords(recs)
	}
	if len(ex) == 0 {
		return nil, fmt.Errorf("%s %s: no actions with recorded measurements", what, path)
	}
	return ex, nil
}

func writeHeldOut(w io.Writer, rep heldOutReport) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "test %s: %d tasks, %d actions (%d tasks left out: the model was trained on them)\n",
		rep.Test, rep.Tasks, rep.Examples, rep.LeftOut)
	fmt.Fprintf(tw, "baselines fitted on the model's training data: %d tasks, %d actions\n\n", rep.TrainTasks, rep.TrainExamples)
	fmt.Fprintf(tw, "predictor\tn\tMAE MiB\tP90 APE %%\tprec@1GiB\trecall@1GiB\tpeak <= P90 %%\t\n")
	for i, m := range rep.Predictors {
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t\n", m.Name, m.N, m.MAEMiB, m.P90APE, m.HeavyPrecision, m.HeavyRecall, rep.P90Coverage[i])
	}
	names := make([]string, len(rep.Predictors))
	for i, m := range rep.Predictors {
		names[i] = m.Name
	}
	pr := func(label string) string {
		var b strings.Builder
		for _, n := range names {
			fmt.Fprintf(&b, "%s prec %%\t%s recall %%\t", n, n)
		}
		return label + b.String()
	}
	fmt.Fprintf(tw, "\nheavy: peak above the line\t\t%s\n", pr("heavy\t"))
	for _, t := range rep.Thresholds {
		fmt.Fprintf(tw, "%s\t\t%d\t", units.FormatSize(t.Threshold), t.Heavy)
		for _, p := range t.Predictors {
			fmt.Fprintf(tw, "%.1f\t%.1f\t", p.Precision, p.Recall)
		}
		fmt.Fprintln(tw)
	}
	fmt.Fprintf(tw, "\nadmission: budget\tline\t%s\n", pr("heavy\t"))
	for _, b := range rep.Admission {
		fmt.Fprintf(tw, "%s\t%s\t%d\t", units.FormatSize(b.Budget), units.FormatSize(b.Threshold), b.Heavy)
		for _, p := range b.Predictors {
			fmt.Fprintf(tw, "%.1f\t%.1f\t", p.Precision, p.Recall)
		}
		fmt.Fprintln(tw)
	}
	fmt.Fprintf(tw, "\nclass\tn\tmax peak MiB\t")
	for _, n := range names {
		fmt.Fprintf(tw, "%s MAE\t", n)
	}
	fmt.Fprintln(tw)
	for _, c := range rep.Classes {
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t", c.Class, c.N, float64(c.MaxPeak)/(1<<20))
		for _, m := range c.Predictors {
			fmt.Fprintf(tw, "%.1f\t", m.MAEMiB)
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}
