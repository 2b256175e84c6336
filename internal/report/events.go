package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/replay"
)

// FromEvents rebuilds replay Results from a JSONL event log written by
// replay.Run, one Result per policy in order of first appearance (a log
// may hold several runs appended). Fields the log does not carry (Start,
// Workflow.Queued beyond admit waits) are approximated or left zero.
func FromEvents(r io.Reader) ([]*replay.Result, error) {
	type wfState struct {
		res   replay.WorkflowResult
		ended bool
	}
	type run struct {
		res   *replay.Result
		wfs   map[string]*wfState
		order []string
	}
	var (
		runs  []*run
		byPol = map[string]*run{}
	)
	get := func(policy string) *run {
		if rn, ok := byPol[policy]; ok {
			return rn
		}
		rn := &run{res: &replay.Result{Policy: policy}, wfs: map[string]*wfState{}}
		byPol[policy] = rn
		runs = append(runs, rn)
		return rn
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for line := 1; sc.Scan(); line++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var e controller.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("event log line %d: %w", line, err)
		}
		rn := get(e.Policy)
		res := rn.res
		res.PeakBytes = max(res.PeakBytes, e.MemBytes)
		res.Residency.Add(e)
		wf := func() *wfState {
			w, ok := rn.wfs[e.Workflow]
			if !ok {
				w = &wfState{res: replay.WorkflowResult{ID: e.Workflow}}
				rn.wfs[e.Workflow] = w
				rn.order = append(rn.order, e.Workflow)
			}
			return w
		}
		at := time.Duration(e.T * float64(time.Second))
		switch e.Kind {
		case controller.EventRunStart:
			res.Budget, res.TimeScale = e.BudgetBytes, e.TimeScale
		case controller.EventSubmit:
			wf().res.Submit = at
		case controller.EventAgentStart:
			wf().res.Attempts++
		case controller.EventAdmit:
			wf().res.Queued += time.Duration(e.QueuedS * float64(time.Second))
		case controller.EventActionDone:
			w := wf()
			w.res.Actions++
			if e.Exit != nil && *e.Exit != 0 && !e.OOM && !e.TimedOut && e.Error == "" {
				w.res.NonZeroExits++
			}
		case controller.EventOOM:
			wf().res.OOMs++
		case controller.EventTimeout:
			wf().res.Timeouts++
		case controller.EventSandboxLost:
			wf().res.Lost++
		case controller.EventWorkflowDone, controller.EventWorkflowFailed:
			w := wf()
			w.ended = true
			w.res.End = at
			w.res.Latency = at - w.res.Submit
			w.res.Completed = e.Kind == controller.EventWorkflowDone
			w.res.Err = e.Error
			res.Makespan = max(res.Makespan, at)
		case controller.EventRunEnd:
			res.Makespan = max(res.Makespan, at)
		case controller.EventSample:
			res.Samples = append(res.Samples, replay.Sample{T: at, MemBytes: e.MemBytes, Running: e.Running, Agents: e.Agents, Live: e.Live})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading event log: %w", err)
	}
	out := make([]*replay.Result, 0, len(runs))
	for _, rn := range runs {
		res := rn.res
		for _, id := range rn.order {
			w := rn.wfs[id]
			if !w.ended {
				w.res.Err = "no workflow_done or workflow_failed event (log truncated?)"
			}
			res.Workflows = append(res.Workflows, w.res)
		}
		res.Tally()
		out = append(out, res)
	}
	return out, nil
}
