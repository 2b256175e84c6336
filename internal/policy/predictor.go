package policy

import (
	"fmt"

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
// its own task's measurements, a copy's included (a task-level split used
// in both directions, TaskFolds).
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

// firstOfClassQuantile is the quantile of the training peaks of a class's
// first actions in their tasks (predict.FirstOfClass) the current predictor
// assumes for the first action of that class in a task.
const firstOfClassQuantile = 0.9

// smallTraining is the example count below which forests grow full trees.
const smallTraining = 200

// TrainPredictor builds the predictor of the given kind from workflows with
// recorded measurements, cross-fitted over two task folds. heavy is the
// heavy-action threshold in bytes (0: the predictor's default).
func TrainPredictor(kind string, wfs []trajectory.Workflow, heavy int64, seed uint64) (predict.Predictor, error) {
	fold := TaskFolds(wfs)
	if len(fold) < 2 {
		return nil, fmt.Errorf("%w: training a predictor needs at least two tasks with recorded measurements, got %d", ErrBadOption, len(fold))
	}
	var parts [2][]trajectory.Workflow
	byID := make(map[string]int, len(wfs))
	for _, w := range wfs {
		f := fold[trajectory.TaskOf(w)]
		byID[w.ID] = f
		parts[f] = append(parts[f], w)
	}
	cf := &crossFit{name: kind, fold: byID}
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
				cf.models[f] = predict.ClassFloor{P: m, HeavyThreshold: heavy, Prior: predict.ClassPriors(predict.FirstOfClass(ex), firstOfClassQuantile)}
			}
		default:
			return nil, fmt.Errorf("%w: unknown predictor %q (want current, static or history)", ErrBadOption, kind)
		}
	}
	return cf, nil
}

// TaskFolds splits the tasks of wfs (trajectory.TaskOf) into two folds:
// sorted, alternately. Copies of one task share a fold, so a model trained
// on one fold never saw a task it predicts in the other.
func TaskFolds(wfs []trajectory.Workflow) map[string]int {
	tasks := trajectory.Tasks(wfs)
	fold := make(map[string]int, len(tasks))
	for i, t := range tasks {
		fold[t] = i % 2
	}
	return fold
}
