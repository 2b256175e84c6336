package report

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"

	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/trajectory"
)

// Delays is where one policy's workflows spent their time in a replay, from
// its event log (ReadDelays), summed over the workflows that ended
// (completed or failed; one still running at the end of the log has no
// latency to split), in seconds of the run's clock. A workflow's latency (submit to its last attempt's end) is
// made of the phases below; what is left (Other) is the time between an
// attempt's end and the next one's start, and what no event marks.
type Delays struct {
	Policy    string `json:"policy"`
	Workflows int    `json:"workflows"`
	Completed int    `json:"completed"`
	Attempts  int    `json:"attempts"`

	Latency float64 `json:"latency_s"`
	// Start: submit to the first attempt's agent_start (agent pacing, or
	// the arrival queue of a policy that runs few agents at once).
	Start float64 `json:"start_s"`
	// Create: each attempt's agent_start to its first sandbox up.
	Create float64 `json:"create_s"`
	// AdmitLight, AdmitHeavy: actions' admission waits (admit's queued_s)
	// by the lane the policy put them in; Heavy counts the heavy ones.
	AdmitLight float64 `json:"admit_light_s"`
	AdmitHeavy float64 `json:"admit_heavy_s"`
	Heavy      int     `json:"heavy_admits"`
	Admits     int     `json:"admits"`
	// Actions: action_start to action_done, every action of every attempt.
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
	byID := make(map[string]*trajectory.Workflow, len(wfs))
	for i := range wfs {
		byID[wfs[i].ID] = &wfs[i]
	}
	type attemptKey struct {
		wf      string
		attempt int
	}
	type attemptState struct {
		start, created, last float64
		lastDone             float64
		hasDone, hasCreate   bool
		started              map[int]float64
		completed            bool
		phases               Delays // its admission, action and between times
	}
	type policyState struct {
		d        Delays
		scale    float64
		submit   map[string]float64
		first    map[string]float64 // first agent_start
		end      map[string]float64
		attempts map[attemptKey]*attemptState
	}
	var order []string
	pols := map[string]*policyState{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	line := 0
	for sc.Scan() {
		line++
		if len(sc.Bytes()) == 0 {
			continue
		}
		var e controller.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("event log line %d: %w", line, err)
		}
		if e.Policy == "" {
			continue
		}
		p := pols[e.Policy]
		if p == nil {
			p = &policyState{d: Delays{Policy: e.Policy}, scale: 1, submit: map[string]float64{},
				first: map[string]float64{}, end: map[string]float64{}, attempts: map[attemptKey]*attemptState{}}
			pols[e.Policy] = p
			order = append(order, e.Policy)
		}
		if e.Workflow != "" && wfs != nil && byID[e.Workflow] == nil {
			return nil, fmt.Errorf("event log line %d: workflow %q is not in the workload", line, e.Workflow)
		}
		var a *attemptState
		if e.Workflow != "" && e.Attempt > 0 {
			k := attemptKey{e.Workflow, e.Attempt}
			if a = p.attempts[k]; a == nil {
				a = &attemptState{start: e.T, started: map[int]float64{}}
				p.attempts[k] = a
			}
			a.last = max(a.last, e.T)
		}
		switch e.Kind {
		case controller.EventRunStart:
			if e.TimeScale > 0 {
				p.scale = e.TimeScale
			}
		case controller.EventSubmit:
			if _, ok := p.submit[e.Workflow]; !ok {
				p.submit[e.Workflow] = e.T
			}
		case controller.EventAgentStart:
			if _, ok := p.first[e.Workflow]; !ok {
				p.first[e.Workflow] = e.T
			}
			if a != nil {
				a.start = e.T
			}
		case controller.EventSandboxCreate:
			if a != nil && !a.hasCreate {
				a.created, a.hasCreate = e.T, true
			}
		case controller.EventAdmit:
			if e.Action == nil || a == nil {
				break
			}
			ph := &a.phases
			ph.Admits++
			if e.Heavy {
				ph.Heavy++
				ph.AdmitHeavy += e.QueuedS
			} else {
				ph.AdmitLight += e.QueuedS
			}
			if a.hasDone {
				gap := max(e.T-e.QueuedS-a.lastDone, 0)
				ph.Between += gap
				if w := byID[e.Workflow]; w != nil && *e.Action < len(w.Actions) {
					model := w.Actions[*e.Action].Wait * p.scale
					ph.ModelWait += min(model, gap)
					ph.Resume += max(gap-model, 0)
				}
			}
		case controller.EventActionStart:
			if e.Action != nil && a != nil {
				a.started[*e.Action] = e.T
			}
		case controller.EventActionDone:
			if e.Action == nil || a == nil {
				break
			}
			if s, ok := a.started[*e.Action]; ok {
				a.phases.Actions += e.T - s
				delete(a.started, *e.Action)
			}
			a.lastDone, a.hasDone = e.T, true
		case controller.EventWorkflowDone:
			if a != nil {
				a.completed = true
			}
			p.end[e.Workflow] = e.T
		case controller.EventWorkflowFailed:
			p.end[e.Workflow] = e.T
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading the event log: %w", err)
	}
	if len(order) == 0 {
		return nil, errors.New("the event log has no policy events")
	}
	out := make([]Delays, 0, len(order))
	for _, name := range order {
		p := pols[name]
		d := p.d
		for id, t := range p.submit {
			d.Workflows++
			end, ok := p.end[id]
			if !ok {
				continue // unfinished: no latency to split
			}
			d.Latency += end - t
			if f, ok := p.first[id]; ok {
				d.Start += f - t
			}
		}
		keys := make([]attemptKey, 0, len(p.attempts))
		for k := range p.attempts {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(x, y attemptKey) int {
			if x.wf != y.wf {
				if x.wf < y.wf {
					return -1
				}
				return 1
			}
			return x.attempt - y.attempt
		})
		for _, k := range keys {
			a := p.attempts[k]
			if _, ended := p.end[k.wf]; !ended {
				continue // its workflow did not finish: no latency to split
			}
			d.Attempts++
			if !a.completed {
				d.Lost += a.last - a.start
				continue
			}
			d.Completed++
			if a.hasCreate {
				d.Create += a.created - a.start
			}
			ph := a.phases
			d.Admits += ph.Admits
			d.Heavy += ph.Heavy
			d.AdmitLight += ph.AdmitLight
			d.AdmitHeavy += ph.AdmitHeavy
			d.Actions += ph.Actions
			d.Between += ph.Between
			d.ModelWait += ph.ModelWait
			d.Resume += ph.Resume
		}
		out = append(out, d)
	}
	return out, nil
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
