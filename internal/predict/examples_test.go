package predict

import (
	"reflect"
	"slices"
	"testing"

	"github.com/tenon-dev/tenon/internal/trajectory"
)

// TestExamplesFromRecordsMatchesWorkflows logs a workflow as the replay would
// (action_done records, shuffled) and expects the same examples as from the
// trajectory itself.
func TestExamplesFromRecordsMatchesWorkflows(t *testing.T) {
	wfs := synthWorkflows(4, 21)
	wfs[1].Actions[2].Hints.Background = true
	fromWF := ExamplesFromWorkflows(wfs)
	var recs []ActionRecord
	for _, e := range fromWF {
		start := e.Ctx.ElapsedS
		recs = append(recs, ActionRecord{Event: EventActionDone, WorkflowID: e.Ctx.WorkflowID, Index: e.Index,
			Class: e.Ctx.Class, Command: e.Ctx.Command, Background: e.Ctx.Hints.Background,
			AvgBytes: e.AvgBytes, PeakBytes: e.PeakBytes, DurationS: e.DurationS,
			StartS: start, EndS: start + e.DurationS, BeforeBytes: e.Ctx.ResidentBytes})
	}
	if r := fromWF[3].Ctx.ResidentBytes; r != 156*mib {
		t.Fatalf("action 3 of a workflow: resident %d bytes, want the recorded before_mib 156 MiB", r)
	}
	recs = append(recs, ActionRecord{Event: "wait_begin", WorkflowID: "noise"})
	slices.Reverse(recs)
	fromRec := ExamplesFromRecords(recs)
	key := func(e Example) string { return e.Ctx.WorkflowID }
	slices.SortStableFunc(fromRec, func(a, b Example) int {
		if key(a) != key(b) {
			if key(a) < key(b) {
				return -1
			}
			return 1
		}
		return a.Index - b.Index
	})
	if len(fromRec) != len(fromWF) {
		t.Fatalf("%d examples from records, %d from workflows", len(fromRec), len(fromWF))
	}
	for i := range fromWF {
		a, b := fromWF[i], fromRec[i]
		fa, fb := Features(a.Ctx, nil, nil), Features(b.Ctx, nil, nil)
		for j := range fa {
			if d := fa[j] - fb[j]; d > 1e-9 || d < -1e-9 {
				t.Fatalf("example %s/%d feature %d: %v from workflows, %v from records", a.Ctx.WorkflowID, a.Index, j, fa[j], fb[j])
			}
		}
		if a.PeakBytes != b.PeakBytes || a.AvgBytes != b.AvgBytes || a.Ctx.Hints != b.Ctx.Hints {
			t.Fatalf("example %s/%d labels or hints differ", a.Ctx.WorkflowID, a.Index)
		}
	}
}

func TestExamplesFromRecordsHistoryIsCompletedOnly(t *testing.T) {
	recs := []ActionRecord{
		{WorkflowID: "w", Index: 0, PeakBytes: 10, StartS: 0, EndS: 5},
		{WorkflowID: "w", Index: 1, PeakBytes: 20, StartS: 3, EndS: 9}, // overlaps action 0
		{WorkflowID: "w", Index: 2, PeakBytes: 30, StartS: 9, EndS: 12},
	}
	ex := ExamplesFromRecords(recs)
	want := []int{0, 0, 2}
	for i, e := range ex {
		if len(e.Ctx.History) != want[i] {
			t.Errorf("action %d: history of %d, want %d", i, len(e.Ctx.History), want[i])
		}
	}
}

func TestExamplesSkipUnrecorded(t *testing.T) {
	wf := trajectory.Workflow{ID: "w", Actions: []trajectory.Action{
		{Wait: 1, Class: "bash", Recorded: &trajectory.Recorded{DurationS: 2, PeakMiB: 5, AvgMiB: 2}},
		{Wait: 1, Class: "bash"},
		{Wait: 3, Class: "read", Recorded: &trajectory.Recorded{DurationS: 1, PeakMiB: 1, AvgMiB: 1}},
	}}
	ex := ExamplesFromWorkflows([]trajectory.Workflow{wf})
	if len(ex) != 2 || ex[1].Index != 2 || len(ex[1].Ctx.History) != 1 {
		t.Fatalf("examples %+v", ex)
	}
	if got, want := ex[1].Ctx.ElapsedS, 1.0+2+1+3; got != want {
		t.Errorf("elapsed %v, want %v", got, want)
	}
	if got, want := ex[1].Ctx.History[0].EndOffsetS, 3.0; got != want {
		t.Errorf("end offset %v, want %v", got, want)
	}
}

func TestSplitByTask(t *testing.T) {
	ex := ExamplesFromWorkflows(synthWorkflows(20, 4))
	tr, val := SplitByTask(ex, 0.25, 9)
	tr2, val2 := SplitByTask(ex, 0.25, 9)
	if !reflect.DeepEqual(val, val2) || !reflect.DeepEqual(tr, tr2) {
		t.Fatal("split is not deterministic for a seed")
	}
	_, val3 := SplitByTask(ex, 0.25, 10)
	if reflect.DeepEqual(ids(val), ids(val3)) {
		t.Error("different seeds chose the same validation tasks")
	}
	if len(tr)+len(val) != len(ex) {
		t.Fatalf("split lost examples: %d + %d != %d", len(tr), len(val), len(ex))
	}
	vi := ids(val)
	if len(vi) != 5 {
		t.Errorf("%d validation tasks, want 5 of 20", len(vi))
	}
	for id := range ids(tr) {
		if vi[id] {
			t.Errorf("task %s is on both sides of the split", id)
		}
	}
	for k, f := range folds(tr, 5, 1) {
		if len(f[0])+len(f[1]) != len(tr) || len(f[1]) == 0 {
			t.Errorf("fold %d: %d + %d examples of %d", k, len(f[0]), len(f[1]), len(tr))
		}
		for id := range ids(f[0]) {
			if ids(f[1])[id] {
				t.Errorf("fold %d: task %s on both sides", k, id)
			}
		}
	}
}

func ids(ex []Example) map[string]bool {
	m := map[string]bool{}
	for _, e := range ex {
		m[e.Ctx.WorkflowID] = true
	}
	return m
}
