package policy

import (
	"fmt"
	"sort"

	"github.com/tenon-dev/tenon/internal/predict"
	"github.com/tenon-dev/tenon/internal/trajectory"
)

// Predictor kinds (seed 000 Table 2).
const (
	PredCurrent = "current" // class, command and task history
	PredStatic  = "static"  // class and command only
	PredHistory = "history" // the preceding action's demand
)

// crossFit predicts each workflow with a model trained on the other fold
// of the workload's tasks, so no workflow is predicted by a model that saw
// its own measurements (a task-level split used in both directions).
type crossFit struct {
	name   string
	models [2]predict.Predictor
	fold   map[string]int // workflow id -> its fold
}

func (c *crossFit) Name() string { return c.name }

// Predict uses the model that did not train on ctx.WorkflowID. Workflows
// unknown at training (e.g. submitted later) use fold 0's model.
func (c *crossFit) Predict(ctx predict.ActionContext) predict.Descriptor {
	f, ok := c.fold[ctx.WorkflowID]
	if !ok {
		return c.models[0].Predict(ctx)
	}
	return c.models[1-f].Predict(ctx)
}

// firstOfClassQuantile is the quantile of a class's training peaks the
// current predictor assumes for the first action of that class in a task.
const firstOfClassQuantile = 0.9

// smallTraining is the example count below which forests grow full trees.
const smallTraining = 200

// TrainPredictor builds the predictor of the given kind from workflows with
// recorded measurements, cross-fitted over two task folds. heavy is the
// heavy-action threshold in bytes (0: the predictor's default).
func TrainPredictor(kind string, wfs []trajectory.Workflow, heavy int64, seed uint64) (predict.Predictor, error) {
	ids := make([]string, 0, len(wfs))
	for _, w := range wfs {
		ids = append(ids, w.ID)
	}
	sort.Strings(ids)
	if len(ids) < 2 {
		return nil, fmt.Errorf("%w: training a predictor needs at least two workflows with recorded measurements, got %d", ErrBadOption, len(ids))
	}
	fold := make(map[string]int, len(ids))
	for i, id := range ids {
		fold[id] = i % 2
	}
	var parts [2][]trajectory.Workflow
	for _, w := range wfs {
		parts[fold[w.ID]] = append(parts[fold[w.ID]], w)
	}
	cf := &crossFit{name: kind, fold: fold}
	for f := range 2 {
		ex := predict.ExamplesFromWorkflows(parts[f])
		if len(ex) == 0 {
			return nil, fmt.Errorf("%w: no recorded measurements to train the %s predictor on", ErrBadOption, kind)
		}
		switch kind {
		case PredHistory:
			cf.models[f] = predict.NewHistoryOnly(ex, heavy)
		case PredCurrent, PredStatic:
			fs := predict.FeatureSetCurrent
			if kind == PredStatic {
				fs = predict.FeatureSetStatic
			}
			tc := predict.TrainConfig{FeatureSet: fs, Seed: seed, HeavyThreshold: heavy, Trees: 40}
			if len(ex) < smallTraining {
				// Too few examples for leaves of 3 and a third of the
				// features per split: grow full trees on every feature.
				tc.MinLeaf, tc.FeatureFraction = 1, 1
			}
			m, err := predict.Train(ex, tc)
			if err != nil {
				return nil, fmt.Errorf("training the %s predictor: %w", kind, err)
			}
			cf.models[f] = m
			if kind == PredCurrent {
				// The current predictor sees the task's history; a forest
				// trained on a bench's few workflows under-uses it, and
				// its point prediction for a class's first action in a
				// task is its weakest (see predict.ClassFloor).
				cf.models[f] = predict.ClassFloor{P: m, HeavyThreshold: heavy, Prior: predict.ClassPriors(ex, firstOfClassQuantile)}
			}
		default:
			return nil, fmt.Errorf("%w: unknown predictor %q (want current, static or history)", ErrBadOption, kind)
		}
	}
	return cf, nil
}
