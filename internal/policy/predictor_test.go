package policy

import (
	"fmt"
	"testing"

	"github.com/tenon-dev/tenon/internal/trajectory"
)

// Copies of a task must share a fold: with folds by sorted workflow id,
// T-r0 and T-r1 alternate, and each copy is predicted by a model trained
// on its twin's measurements.
func TestTaskFoldsKeepCopiesTogether(t *testing.T) {
	var base []trajectory.Workflow
	for i := range 6 {
		base = append(base, trajectory.Workflow{Version: trajectory.Version, ID: fmt.Sprintf("task-%d", i),
			Actions: []trajectory.Action{{Class: "bash", Command: "make", Recorded: &trajectory.Recorded{DurationS: 1, PeakMiB: float64(10 * (i + 1))}}}})
	}
	wfs, err := trajectory.Replicate(base, 3, 1, 10)
	if err != nil {
		t.Fatal(err)
	}
	fold := TaskFolds(wfs)
	if len(fold) != 6 {
		t.Fatalf("%d tasks in folds, want 6", len(fold))
	}
	n := [2]int{}
	for _, f := range fold {
		n[f]++
	}
	if n[0] != 3 || n[1] != 3 {
		t.Fatalf("folds hold %v tasks, want 3 and 3", n)
	}
	p, err := TrainPredictor(PredStatic, wfs, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	cf := p.(*crossFit)
	for _, w := range wfs {
		if got, want := cf.fold[w.ID], fold[trajectory.TaskOf(w)]; got != want {
			t.Fatalf("%s predicted from fold %d's other side, its task %s is in fold %d", w.ID, got, trajectory.TaskOf(w), want)
		}
	}
}
