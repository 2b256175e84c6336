package app

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/tenon-dev/tenon/internal/predict"
	"github.com/tenon-dev/tenon/internal/store"
	"github.com/tenon-dev/tenon/internal/trajectory/agentcgroup"
	"github.com/tenon-dev/tenon/internal/workload"
)

// Online learning: the daemon's predictor (policies with admission) starts
// from class priors and is retrained on the daemon's own measured actions.
const (
	// RetrainEvery is K: the predictor is retrained in the background once
	// K actions were measured since the last training (or the start). 50
	// actions are a few agents' worth of tool calls: the first retrain
	// comes early, and a forest of 40 trees on a few thousand examples
	// trains in well under a second.
	RetrainEvery = 50
	// maxTraining bounds the measurements a retrain reads (the latest).
	maxTraining = 20000
	// priorQuantile is the quantile of a class's peaks assumed for its
	// first action in a workflow (policy's firstOfClassQuantile).
	priorQuantile = 0.9
	// minClassSamples is how many measured first actions of a class
	// (predict.FirstOfClass) make its learned prior replace the
	// calibration's.
	minClassSamples = 5
	// keepModels is how many model versions stay in the model directory.
	keepModels = 3
	// smallTraining is the example count below which forests grow full
	// trees on every feature (as policy.TrainPredictor does).
	smallTraining = 200
)

// learner keeps the daemon's measurements (measurements.db in its
// directory, an internal/store database) and the model versions trained
// on them (model-<version>.json, predict's model file), and swaps each
// retrained model into the policy.
type learner struct {
	dir    string
	st     *store.Store
	priors map[string]int64 // calibration priors per class
	def    int64            // calibration prior of a class without one
	heavy  int64            // heavy-action threshold
	every  int              // RetrainEvery
	online bool             // false when a model was given (--model)
	origin string           // what the start predictor is, for the status line
	log    *slog.Logger
	swap   func(predict.Predictor) error // set once the policy is built

	mu      sync.Mutex
	pending int  // measurements since the last training
	running bool // a retrain is under way
	version int  // of the model in use, 0 for the priors
	wg      sync.WaitGroup
}

// openLearner opens the learner's state in dir and returns it with the
// predictor to start from: the model file given, else the latest saved
// model version, else the calibration's class priors. Each choice is
// logged once.
func openLearner(dir, modelFile string, heavy int64, every int, log *slog.Logger) (*learner, predict.Predictor, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("creating model directory: %w", err)
	}
	priors, def, err := calibrationPriors(priorQuantile)
	if err != nil {
		return nil, nil, err
	}
	// Measurements are written on every action's completion path; losing
	// the last few in a crash costs nothing, so commits are not synced.
	st, err := store.OpenWith(filepath.Join(dir, "measurements.db"), store.Options{NoSync: true})
	if err != nil {
		return nil, nil, err
	}
	l := &learner{dir: dir, st: st, priors: priors, def: def, heavy: heavy, every: every, online: modelFile == "", log: log}
	recs, err := st.Measurements(maxTraining)
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	ex := predict.ExamplesFromRecords(recs)
	if modelFile != "" {
		m, err := predict.Load(modelFile)
		if err != nil {
			st.Close()
			return nil, nil, err
		}
		log.Info("predictor: model file given; online retraining off (measurements are still kept)", "model", modelFile, "dir", dir)
		l.origin = "predictor " + modelFile + " (not retrained)"
		return l, l.wrap(m, ex), nil
	}
	if v, path := latestModel(dir); v > 0 {
		m, err := predict.Load(path)
		if err == nil {
			l.version = v
			l.origin = fmt.Sprintf("predictor model v%d, retrained every %d actions", v, every)
			log.Info("predictor: saved model loaded", "version", v, "model", path, "measurements", len(recs), "retrain_every", every)
			return l, l.wrap(m, ex), nil
		}
		log.Warn("predictor: saved model unreadable, starting from class priors", "model", path, "err", err)
	}
	l.pending = len(recs)
	l.origin = fmt.Sprintf("predictor class priors, retrained every %d actions", every)
	log.Info("predictor: class priors from the workload calibration until the first retrain", "measurements", len(recs), "retrain_every", every)
	return l, l.prior(), nil
}

// prior is the predictor before any model: the calibration's class
// priors, a generic shell command classed by its text as the calibration
// classed the traces' commands (agentcgroup.ClassifyCommand), raised to
// the workflow's largest peak of the class so far (predict.ClassFloor).
func (l *learner) prior() predict.Predictor {
	p := predict.ClassPrior{Peak: l.priors, Default: l.def, Reclass: agentcgroup.ClassifyCommand, HeavyThreshold: l.heavy}
	return predict.ClassFloor{P: p, HeavyThreshold: l.heavy, Prior: l.priors}
}

// wrap puts the class floor on a trained model: the first action of a
// class in a workflow is predicted at least the class's prior, learned
// from the examples that were the first of their class in their workflow
// (predict.FirstOfClass) where a class has minClassSamples of them, else
// the calibration's.
func (l *learner) wrap(m predict.Predictor, ex []predict.Example) predict.Predictor {
	prior := maps.Clone(l.priors)
	first := predict.FirstOfClass(ex)
	n := map[string]int{}
	for _, e := range first {
		n[predict.NormalizeClass(e.Ctx.Class)]++
	}
	for c, v := range predict.ClassPriors(first, priorQuantile) {
		if n[c] >= minClassSamples {
			prior[c] = v
		}
	}
	return predict.ClassFloor{P: m, HeavyThreshold: l.heavy, Prior: prior}
}

// Record keeps a measured action (the live adapter's Measured hook) and
// starts a retrain in the background once every K of them.
func (l *learner) Record(r predict.ActionRecord) {
	if _, err := l.st.AddMeasurement(r); err != nil {
		l.log.Warn("keeping a measurement", "err", err)
		return
	}
	l.mu.Lock()
	l.pending++
	start := l.online && l.swap != nil && l.pending >= l.every && !l.running
	if start {
		l.running, l.pending = true, 0
		l.wg.Add(1)
	}
	l.mu.Unlock()
	if start {
		go func() {
			defer l.wg.Done()
			if err := l.retrain(); err != nil {
				l.log.Warn("retraining the predictor", "err", err)
			}
			l.mu.Lock()
			l.running = false
			l.mu.Unlock()
		}()
	}
}

// retrain trains a model on the latest measurements, saves it as the next
// version and swaps it into the policy.
func (l *learner) retrain() error {
	recs, err := l.st.Measurements(maxTraining)
	if err != nil {
		return err
	}
	ex := predict.ExamplesFromRecords(recs)
	if len(ex) == 0 {
		return errors.New("no measurements to train on")
	}
	tc := predict.TrainConfig{FeatureSet: predict.FeatureSetCurrent, Seed: 1, HeavyThreshold: l.heavy, Trees: 40}
	if len(ex) < smallTraining {
		tc.MinLeaf, tc.FeatureFraction = 1, 1
	}
	m, err := predict.Train(ex, tc)
	if err != nil {
		return err
	}
	l.mu.Lock()
	v := l.version + 1
	l.mu.Unlock()
	path := modelPath(l.dir, v)
	if err := m.Save(path); err != nil {
		return err
	}
	if err := l.swap(l.wrap(m, ex)); err != nil {
		return err
	}
	l.mu.Lock()
	l.version = v
	l.mu.Unlock()
	pruneModels(l.dir, v-keepModels)
	l.log.Info("predictor retrained", "version", v, "examples", len(ex), "model", path)
	return nil
}

// Close waits for a retrain under way and closes the measurements.
func (l *learner) Close() error {
	l.wg.Wait()
	return l.st.Close()
}

// modelPath is model version v's file in dir.
func modelPath(dir string, v int) string {
	return filepath.Join(dir, fmt.Sprintf("model-%06d.json", v))
}

// modelVersions lists the model versions saved in dir, oldest first.
func modelVersions(dir string) []int {
	names, _ := filepath.Glob(filepath.Join(dir, "model-*.json"))
	var out []int
	for _, n := range names {
		s := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(n), "model-"), ".json")
		if v, err := strconv.Atoi(s); err == nil && v > 0 {
			out = append(out, v)
		}
	}
	slices.SortFunc(out, cmp.Compare)
	return out
}

// latestModel is the newest saved version and its file (0 when none).
func latestModel(dir string) (int, string) {
	vs := modelVersions(dir)
	if len(vs) == 0 {
		return 0, ""
	}
	v := vs[len(vs)-1]
	return v, modelPath(dir, v)
}

// pruneModels removes versions up to and including upTo.
func pruneModels(dir string, upTo int) {
	for _, v := range modelVersions(dir) {
		if v <= upTo {
			os.Remove(modelPath(dir, v))
		}
	}
}

// calibrationPriors derives per-class peak priors from the workload
// calibration embedded in internal/workload (calibration.json: the
// AgentCgroup haiku traces, 1004 sandbox actions, classes assigned by
// agentcgroup.ClassifyCommand): the q-quantile of each class's peaks, its
// light and heavy actions mixed by their counts, and the q-quantile of all
// actions for a class the calibration lacks.
func calibrationPriors(q float64) (map[string]int64, int64, error) {
	cal, err := workload.DefaultCalibration()
	if err != nil {
		return nil, 0, err
	}
	out := map[string]int64{}
	var all []workload.Population
	for _, c := range cal.Classes {
		pops := []workload.Population{c.Light, c.Heavy}
		out[predict.NormalizeClass(c.Class)] = mibBytes(mixtureQuantile(pops, q))
		all = append(all, pops...)
	}
	return out, mibBytes(mixtureQuantile(all, q)), nil
}

// mixtureQuantile is the q-quantile of the populations' peaks mixed by
// their counts, each population's distribution read at evenly spaced
// quantiles.
func mixtureQuantile(pops []workload.Population, q float64) float64 {
	const points = 200
	type wv struct{ v, w float64 }
	var xs []wv
	total := 0.0
	for _, p := range pops {
		if p.Count == 0 || len(p.PeakMiB) == 0 {
			continue
		}
		for i := range points {
			xs = append(xs, wv{p.PeakMiB.Quantile((float64(i) + 0.5) / points), float64(p.Count) / points})
		}
		total += float64(p.Count)
	}
	slices.SortFunc(xs, func(a, b wv) int { return cmp.Compare(a.v, b.v) })
	acc := 0.0
	for _, x := range xs {
		if acc += x.w; acc >= q*total {
			return x.v
		}
	}
	if len(xs) == 0 {
		return 0
	}
	return xs[len(xs)-1].v
}

func mibBytes(mib float64) int64 { return int64(mib * (1 << 20)) }
