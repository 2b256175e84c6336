package report

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"text/tabwriter"

	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/trajectory"
)

// Delays is where one policy's workflows spent their time in a replay, from
// its event log (ReadDelays), summed over the workflows that ended
// (completed or failed; one still running at the end of the log has no
// latency to split), in seconds of the run's clock. A workflow's latency
// (submit to its last attempt's end) is made of the phases below, which
// count the attempts that completed, and Lost, the attempts that did not;
// what is left (Other) is the time between an attempt's end and the next
// one's start, and what no event marks.
type Delays struct {
	Policy    string `json:"policy"`
	Workflows int    `json:"workflows"`
	Completed int    `json:"completed"`
	Attempts  int    `json:"attempts"`

	Latency float64 `json:"latency_s"`
	// Start: submit to the first attempt's agent_start (agent pacing, or
	// the arrival queue of a policy that runs few agents at once).
	Start float64 `json:"start_s"`
	// Create: a completed attempt's agent_start to its first sandbox up.
	Create float64 `json:"create_s"`
	// AdmitLight, AdmitHeavy: actions' admission waits (admit's queued_s)
	// by the lane the policy put them in; Heavy counts the heavy ones.
	AdmitLight float64 `json:"admit_light_s"`
	AdmitHeavy float64 `json:"admit_heavy_s"`
	Heavy      int     `json:"heavy_admits"`
	Admits     int     `json:"admits"`
	// Actions: action_start to action_done, every action of the completed
	// attempts.
	Actions float64 `json:"actions_s"`
	// Between: an action's end to the next action's enqueue in the same
	// attempt (admit's time less its queued_s). With the workload given,
	// ModelWait is the recorded waits those gaps replay (wait_s times the
	// run's time scale) and Resume the rest: what the gaps took beyond the
	// model wait (a reclaimed sandbox brought back, the host's own latency).
	Between   float64 `json:"between_s"`
	ModelWait float64 `json:"model_wait_s,omitempty"`
	Resume    float64 `json:"resume_s,omitempty"`
	// Lost: the time of attempts that did not complete (OOM kill, timeout,
	// preemption), from their agent_start to their last event; the other
	// phases count the completed attempts only.
	Lost float64 `json:"lost_s"`
}

// Other is the part of Latency no phase accounts for.
func (d Delays) Other() float64 {
	return d.Latency - d.Start - d.Create - d.AdmitLight - d.AdmitHeavy - d.Actions - d.Between - d.Lost
}

// ReadDelays reads a replay's JSONL event log (tenon replay --events, tenon
// bench --events-dir) and returns each policy's Delays, in the order the
// policies first appear. wfs, when not nil, are the workflows the run
// replayed (the same ids: for tenon bench's traces group, the set imported
// and replicated with tenon trace replicate); they split Between into
// ModelWait and Resume. An event of a workflow wfs does not have is an
// error.
func ReadDelays(r io.Reader, wfs []trajectory.Workflow) ([]Delays, error) {
	var byID map[string]*trajectory.Workflow // nil: no workload
	if wfs != nil {
		byID = make(map[string]*trajectory.Workflow, len(wfs))
		for i := range wfs {
			byID[wfs[i].ID] = &wfs[i]
		}
	}
	events, order, err := readPolicyEvents(r, byID)
	if err != nil {
		return nil, err
	}
	out := make([]Delays, 0, len(order))
	for _, name := range order {
		out = append(out, delaysOf(name, events[name], byID))
	}
	return out, nil
}

// readPolicyEvents reads the log's events by policy, in the order the
// policies first appear. With byID not nil, an event of a workflow not in
// it is an error.
func readPolicyEvents(r io.Reader, byID map[string]*trajectory.Workflow) (map[string][]controller.Event, []string, error) {
	events := map[string][]controller.Event{}
	var order []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for line := 1; sc.Scan(); line++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var e controller.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, nil, fmt.Errorf("event log line %d: %w", line, err)
		}
		if e.Policy == "" {
			continue
		}
		if e.Workflow != "" && byID != nil && byID[e.Workflow] == nil {
			return nil, nil, fmt.Errorf("event log line %d: workflow %q is not in the workload", line, e.Workflow)
		}
		if _, ok := events[e.Policy]; !ok {
			order = append(order, e.Policy)
		}
		events[e.Policy] = append(events[e.Policy], e)
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("reading the event log: %w", err)
	}
	if len(order) == 0 {
		return nil, nil, errors.New("the event log has no policy events")
	}
	return events, order, nil
}

type attemptKey struct {
	wf      string
	attempt int
}

// attemptSpan is when an attempt started (agent_start, else its first
// event) and its last event, and whether it completed its workflow.
type attemptSpan struct {
	start, last float64
	completed   bool
}

// delaysOf is one policy's Delays from its events (ReadDelays). A first
// pass finds the workflows that ended and the attempts that completed;
// the second sums the phases of those attempts.
func delaysOf(name string, es []controller.Event, byID map[string]*trajectory.Workflow) Delays {
	d := Delays{Policy: name}
	scale := 1.0
	submit, first, end := map[string]float64{}, map[string]float64{}, map[string]float64{}
	spans := map[attemptKey]*attemptSpan{}
	for _, e := range es {
		if e.Workflow != "" && e.Attempt > 0 {
			k := attemptKey{e.Workflow, e.Attempt}
			a := spans[k]
			if a == nil {
				a = &attemptSpan{start: e.T}
				spans[k] = a
			}
			a.last = max(a.last, e.T)
			switch e.Kind {
			case controller.EventAgentStart:
				a.start = e.T
			case controller.EventWorkflowDone:
				a.completed = true
			}
		}
		switch e.Kind {
		case controller.EventRunStart:
			if e.TimeScale > 0 {
				scale = e.TimeScale
			}
		case controller.EventSubmit:
			if _, ok := submit[e.Workflow]; !ok {
				submit[e.Workflow] = e.T
			}
		case controller.EventAgentStart:
			if _, ok := first[e.Workflow]; !ok {
				first[e.Workflow] = e.T
			}
		case controller.EventWorkflowDone, controller.EventWorkflowFailed:
			end[e.Workflow] = e.T
		}
	}
	// Sums in a fixed order: the same log gives the same floats.
	for _, id := range slices.Sorted(maps.Keys(submit)) {
		t := submit[id]
		d.Workflows++
		if e, ok := end[id]; ok { // else unfinished: no latency to split
			d.Latency += e - t
			if f, ok := first[id]; ok {
				d.Start += f - t
			}
		}
	}
	counted := func(k attemptKey) bool {
		_, ended := end[k.wf]
		return ended
	}
	keys := slices.SortedFunc(maps.Keys(spans), func(x, y attemptKey) int {
		return cmp.Or(cmp.Compare(x.wf, y.wf), cmp.Compare(x.attempt, y.attempt))
	})
	for _, k := range keys {
		a := spans[k]
		switch {
		case !counted(k):
		case a.completed:
			d.Attempts++
			d.Completed++
		default:
			d.Attempts++
			d.Lost += a.last - a.start
		}
	}
	type actionKey struct {
		attemptKey
		action int
	}
	created := map[attemptKey]bool{}
	started := map[actionKey]float64{}
	lastDone := map[attemptKey]float64{}
	for _, e := range es {
		k := attemptKey{e.Workflow, e.Attempt}
		a := spans[k]
		// A completed attempt's workflow ended (workflow_done): counted.
		if a == nil || !a.completed {
			continue
		}
		switch e.Kind {
		case controller.EventSandboxCreate:
			if !created[k] {
				created[k] = true
				d.Create += e.T - a.start
			}
		case controller.EventAdmit:
			if e.Action == nil {
				break
			}
			d.Admits++
			if e.Heavy {
				d.Heavy++
				d.AdmitHeavy += e.QueuedS
			} else {
				d.AdmitLight += e.QueuedS
			}
			if done, ok := lastDone[k]; ok {
				gap := max(e.T-e.QueuedS-done, 0)
				d.Between += gap
				if w := byID[e.Workflow]; w != nil && *e.Action < len(w.Actions) {
					model := w.Actions[*e.Action].Wait * scale
					d.ModelWait += min(model, gap)
					d.Resume += max(gap-model, 0)
				}
			}
		case controller.EventActionStart:
			if e.Action != nil {
				started[actionKey{k, *e.Action}] = e.T
			}
		case controller.EventActionDone:
			if e.Action == nil {
				break
			}
			if s, ok := started[actionKey{k, *e.Action}]; ok {
				d.Actions += e.T - s
				delete(started, actionKey{k, *e.Action})
			}
			lastDone[k] = e.T
		}
	}
	return d
}

// WriteDelays writes ds as an aligned table, one row per policy, seconds
// summed over the workflows.
func WriteDelays(w io.Writer, ds []Delays) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "policy\tdone\tlatency\tstart\tcreate\tadmit light\tadmit heavy (n)\tactions\tbetween\tmodel wait\tresume\tlost\tother\t")
	for _, d := range ds {
		mw, rs := "-", "-"
		if d.ModelWait > 0 || d.Resume > 0 {
			mw, rs = fmt.Sprintf("%.0f", d.ModelWait), fmt.Sprintf("%.0f", d.Resume)
		}
		fmt.Fprintf(tw, "%s\t%d/%d\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f (%d)\t%.0f\t%.0f\t%s\t%s\t%.0f\t%.0f\t\n",
			d.Policy, d.Completed, d.Workflows, d.Latency, d.Start, d.Create, d.AdmitLight, d.AdmitHeavy, d.Heavy,
			d.Actions, d.Between, mw, rs, d.Lost, d.Other())
	}
	return tw.Flush()
}
