package sim

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/tenon-dev/tenon/internal/policy"
	"github.com/tenon-dev/tenon/internal/predict"
	"github.com/tenon-dev/tenon/internal/trajectory"
)

// Predictors holds cross-fitted predictors of each kind: workflows are split
// by task into two halves, a predictor trained on one half predicts the
// other, and vice versa, so no workflow is predicted by a model that saw it.
type Predictors struct {
	half  map[string]int // workflow id → its half (0 or 1); copies of a task share one
	byKnd map[string][2]predict.Predictor
}

// PredictorOptions are the knobs of NewPredictors.
type PredictorOptions struct {
	Seed uint64
	// MaxTrainWorkflows caps the workflows each half trains on (a seeded
	// sample; 0: 200), which bounds training time at scale.
	MaxTrainWorkflows int
	Kinds             []string // PredCurrent, PredStatic, PredHistory; nil: all
	Trees             int      // forest size (0: predict's default)
}

// NewPredictors trains the predictors of each kind on the two halves of wfs.
// Actions without Recorded values are given ones derived from their Mem
// profile (avg and peak above the level before the action).
func NewPredictors(wfs []trajectory.Workflow, o PredictorOptions) (*Predictors, error) {
	if o.MaxTrainWorkflows <= 0 {
		o.MaxTrainWorkflows = 200
	}
	if o.Kinds == nil {
		o.Kinds = []string{PredCurrent, PredStatic, PredHistory}
	}
	tasks := trajectory.Tasks(wfs)
	rng := rand.New(rand.NewPCG(o.Seed, 0xc0ffee))
	rng.Shuffle(len(tasks), func(i, j int) { tasks[i], tasks[j] = tasks[j], tasks[i] })
	halfOf := make(map[string]int, len(tasks))
	for i, t := range tasks {
		halfOf[t] = i % 2
	}
	p := &Predictors{half: map[string]int{}, byKnd: map[string][2]predict.Predictor{}}
	var train [2][]trajectory.Workflow
	for _, w := range wfs {
		h := halfOf[trajectory.TaskOf(w)]
		p.half[w.ID] = h
		if len(train[h]) < o.MaxTrainWorkflows {
			train[h] = append(train[h], withRecorded(w))
		}
	}
	var ex [2][]predict.Example
	for h := range 2 {
		ex[h] = predict.ExamplesFromWorkflows(train[h])
		if len(ex[h]) == 0 { // a single workflow: both halves use the other's data
			ex[h] = predict.ExamplesFromWorkflows(train[1-h])
		}
	}
	for _, k := range o.Kinds {
		var pair [2]predict.Predictor
		for h := range 2 {
			// The predictor for half h is trained on the other half.
			src := ex[1-h]
			if len(src) == 0 {
				src = ex[h]
			}
			var err error
			switch k {
			case PredHistory:
				pair[h] = predict.NewHistoryOnly(src, 0)
			case PredCurrent, PredStatic:
				fs := predict.FeatureSetCurrent
				if k == PredStatic {
					fs = predict.FeatureSetStatic
				}
				pair[h], err = predict.Train(src, predict.TrainConfig{FeatureSet: fs, Seed: o.Seed, Trees: o.Trees})
			default:
				err = fmt.Errorf("%w: unknown predictor %q", ErrBadConfig, k)
			}
			if err != nil {
				return nil, fmt.Errorf("training the %s predictor: %w", k, err)
			}
		}
		p.byKnd[k] = pair
	}
	return p, nil
}

// For returns the predictor of kind for workflow id (the one that did not
// train on it), or nil.
func (p *Predictors) For(kind, id string) predict.Predictor {
	pair, ok := p.byKnd[kind]
	if !ok {
		return nil
	}
	return pair[p.half[id]]
}

// withRecorded returns w with Recorded values filled in from Mem profiles
// where missing.
func withRecorded(w trajectory.Workflow) trajectory.Workflow {
	w.Actions = slices.Clone(w.Actions)
	for i, a := range w.Actions {
		if a.Recorded != nil || a.Mem == nil {
			continue
		}
		pr := profileOf(a)
		w.Actions[i].Recorded = &trajectory.Recorded{DurationS: pr.end.Seconds(),
			AvgMiB: float64(pr.avg) / (1 << 20), PeakMiB: float64(pr.peak) / (1 << 20)}
	}
	return w
}

// LivePredictors trains the predictors of each kind exactly as the live
// policy registry does (policy.TrainPredictor: task folds by sorted
// task, heavy threshold budget/8, seed 1), so a simulated run
// admits with the descriptors a live run of the same workload would see.
// Training uses every workflow: at thousands of workflows prefer
// NewPredictors, which samples.
func LivePredictors(wfs []trajectory.Workflow, budget int64, kinds []string) (*Predictors, error) {
	if kinds == nil {
		kinds = []string{PredCurrent, PredStatic, PredHistory}
	}
	p := &Predictors{half: map[string]int{}, byKnd: map[string][2]predict.Predictor{}}
	train := recordedWorkflows(wfs)
	for _, k := range kinds {
		cf, err := policy.TrainPredictor(k, train, budget/8, 1)
		if err != nil {
			return nil, fmt.Errorf("training the live %s predictor: %w", k, err)
		}
		p.byKnd[k] = [2]predict.Predictor{cf, cf}
	}
	return p, nil
}

// foldPredictor is one kind of Predictors as a single predictor: each
// workflow is predicted by the model trained on the other half.
type foldPredictor struct {
	p    *Predictors
	kind string
}

func (f foldPredictor) Name() string { return f.kind }

func (f foldPredictor) Predict(ctx predict.ActionContext) predict.Descriptor {
	return f.p.For(f.kind, ctx.WorkflowID).Predict(ctx)
}

// recordedWorkflows is wfs with every Mem profile's measurements filled
// in as Recorded values (withRecorded).
func recordedWorkflows(wfs []trajectory.Workflow) []trajectory.Workflow {
	rec := make([]trajectory.Workflow, len(wfs))
	for i, w := range wfs {
		rec[i] = withRecorded(w)
	}
	return rec
}
