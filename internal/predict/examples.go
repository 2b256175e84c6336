package predict

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/tenon-dev/tenon/internal/trajectory"
)

// Example is one training or validation sample: the causal context of an
// action and its measured outcome (the labels).
type Example struct {
	Ctx       ActionContext
	Index     int   // position of the action in its workflow
	PeakBytes int64 // measured peak above the level before the action
	AvgBytes  int64 // measured average above the level before the action
	DurationS float64
}

// ExamplesFromWorkflows builds one example per action with Recorded values.
// Offsets are relative to the workflow's start: action i becomes ready after
// the waits and durations of actions 0..i-1 plus its own wait. Actions without
// Recorded yield no example and do not enter the history (their duration,
// unknown, counts as zero).
func ExamplesFromWorkflows(wfs []trajectory.Workflow) []Example {
	var out []Example
	for _, wf := range wfs {
		var hist []Completed
		t := 0.0
		for i, a := range wf.Actions {
			t += a.Wait
			ctx := ContextFor(wf.ID, a, slices.Clip(hist), t)
			r := a.Recorded
			if r == nil {
				continue
			}
			peak, avg := int64(r.PeakMiB*mib), int64(r.AvgMiB*mib)
			ctx.ResidentBytes = int64(r.BeforeMiB * mib)
			out = append(out, Example{Ctx: ctx, Index: i, PeakBytes: peak, AvgBytes: avg, DurationS: r.DurationS})
			t += r.DurationS
			hist = append(hist, Completed{Class: a.Class, Command: a.Command, PeakBytes: peak, AvgBytes: avg,
				DurationS: r.DurationS, EndOffsetS: t, ResidentBytes: ctx.ResidentBytes})
		}
	}
	return out
}

// EventActionDone is the Event value of an ActionRecord.
const EventActionDone = "action_done"

// ActionRecord is the "action done" event of tenon's replay event log, the
// minimal record from which training examples are rebuilt. One JSON object
// per completed action:
//
//	event       always "action_done"
//	workflow    workflow id
//	action      index of the action in its workflow (0-based)
//	class       action class as in the trajectory
//	command     command text as in the trajectory
//	background  the action's declared background hint
//	avg_bytes   measured average memory above the sandbox level before the action
//	peak_bytes  measured peak memory above that level
//	duration_s  run time of the action, seconds
//	start_s     when the action started, seconds since the workflow started
//	end_s       when the action ended, seconds since the workflow started
//	before_bytes what the sandbox held just before the action (optional; 0 or
//	            absent: not measured)
//
// A workflow retried after a failure should log only the attempt that
// completed (or the replay should give attempts distinct workflow ids).
type ActionRecord struct {
	Event       string  `json:"event"`
	WorkflowID  string  `json:"workflow"`
	Index       int     `json:"action"`
	Class       string  `json:"class"`
	Command     string  `json:"command"`
	Background  bool    `json:"background,omitempty"`
	AvgBytes    int64   `json:"avg_bytes"`
	PeakBytes   int64   `json:"peak_bytes"`
	DurationS   float64 `json:"duration_s"`
	StartS      float64 `json:"start_s"`
	EndS        float64 `json:"end_s"`
	BeforeBytes int64   `json:"before_bytes,omitempty"`
}

// ExamplesFromRecords builds examples from event-log records. Records of
// other events are ignored. An action's history holds the records of the
// same workflow with a lower index that ended no later than it started; its
// elapsed time is its start offset.
func ExamplesFromRecords(recs []ActionRecord) []Example {
	byWF := map[string][]ActionRecord{}
	var ids []string
	for _, r := range recs {
		if r.Event != EventActionDone && r.Event != "" {
			continue
		}
		if _, ok := byWF[r.WorkflowID]; !ok {
			ids = append(ids, r.WorkflowID)
		}
		byWF[r.WorkflowID] = append(byWF[r.WorkflowID], r)
	}
	var out []Example
	for _, id := range ids {
		rs := byWF[id]
		slices.SortStableFunc(rs, func(a, b ActionRecord) int { return cmp.Compare(a.Index, b.Index) })
		for i, r := range rs {
			var hist []Completed
			for _, p := range rs[:i] {
				if p.EndS <= r.StartS {
					hist = append(hist, Completed{Class: p.Class, Command: p.Command, PeakBytes: p.PeakBytes,
						AvgBytes: p.AvgBytes, DurationS: p.DurationS, EndOffsetS: p.EndS, ResidentBytes: p.BeforeBytes})
				}
			}
			a := trajectory.Action{Class: r.Class, Command: r.Command,
				Hints: trajectory.Hints{Background: r.Background}}
			ctx := ContextFor(id, a, hist, r.StartS)
			ctx.ResidentBytes = r.BeforeBytes
			out = append(out, Example{Ctx: ctx, Index: r.Index,
				PeakBytes: r.PeakBytes, AvgBytes: r.AvgBytes, DurationS: r.DurationS})
		}
	}
	return out
}

// SplitByTask splits examples into train and validation sets by workflow:
// round(valFraction × workflows) workflows, chosen by a generator seeded with
// seed, go to validation, so correlated actions never straddle the split.
// The order of examples within each side is preserved.
func SplitByTask(examples []Example, valFraction float64, seed uint64) (train, val []Example) {
	ids := shuffledWorkflows(examples, seed, 0x5eed)
	nVal := int(math.Round(min(max(valFraction, 0), 1) * float64(len(ids))))
	val, train = OfTasks(examples, ids[:nVal])
	return train, val
}

// shuffledWorkflows returns the distinct workflow ids of examples, sorted
// and then shuffled by a generator seeded with (seed, stream), so a split
// depends only on the set of workflows and the seed.
func shuffledWorkflows(examples []Example, seed, stream uint64) []string {
	seen := map[string]bool{}
	var ids []string
	for _, e := range examples {
		if !seen[e.Ctx.WorkflowID] {
			seen[e.Ctx.WorkflowID] = true
			ids = append(ids, e.Ctx.WorkflowID)
		}
	}
	slices.Sort(ids)
	rng := rand.New(rand.NewPCG(seed, stream))
	rng.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	return ids
}
