package node

import (
	"context"
	"fmt"
	"time"

	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/residency"
	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/units"
)

// The harness side of the node agent. An agent's harness tells the node
// agent what its agent does, through the node agent's API (harnessapi.go):
// an action starts (it waits for admission, and for its pod to come back
// if tenon suspended it), an action ends, a model wait begins with its
// expected length, a model wait ends. With that the node runs the whole
// policy over the agent (agent pacing at its first action, admission of
// every action, the residency decision at every boundary) instead of the
// gate alone. A pod is one agent, named by its namespace and name (under
// agent-sandbox the pod has its Sandbox's name); its agent container is
// the pod's first adopted container.

// Suspender is residency through the cluster (kube.Residency, wired by
// the composition root): the node tells it each idle boundary and each
// time an agent is needed again.
type Suspender interface {
	// Idle records an action-done boundary of the pod's agent: what was
	// seen, the pod's memory, the expected model wait (0: unknown).
	Idle(pod PodRef, o residency.Observation, workingSet int64, wait time.Duration)
	// Resume says the pod's agent is needed again; false when its pod's
	// Sandbox is not one this node tracks.
	Resume(pod PodRef) bool
	// Suspended reports whether tenon suspended (or is suspending) the
	// pod's Sandbox: its pod going is not the agent's end.
	Suspended(pod PodRef) bool
}

// maxHistory bounds the actions kept in an agent's Workflow (the
// predictor's history), as the daemon does.
const maxHistory = 256

// podAgent is one pod's agent as the harness drives it.
type podAgent struct {
	pod   PodRef // namespace and name (no UID: the pod of a resumed Sandbox is a new one)
	a     *controller.Agent
	ctr   string        // the adopted container serving as its sandbox, "" when its pod is gone
	up    chan struct{} // closed when ctr is set
	ready bool          // passed Policy.AgentReady
	busy  bool          // an action start is waiting or an action runs
	act   *actionRun
	// pinned says why its sandbox must stay (processes left running by
	// its last action), "" when nothing.
	pinned string
}

// actionRun is a running action.
type actionRun struct {
	id    string
	index int
	class string
	grant controller.Grant
	start time.Time
	queue time.Duration
	ctr   string
	peak  int64 // of the container's usage, sampled every OOMPeriod
	sum   int64
	n     int64
}

// ActionRequest is the body of POST .../actions: an action about to run.
type ActionRequest struct {
	// Command is the action's command line (prediction features).
	Command string `json:"command,omitempty"`
	// Class is its class (bash, test, build, ...); default bash.
	Class string `json:"class,omitempty"`
	// MemHintBytes is the harness's guess of its peak memory.
	MemHintBytes int64 `json:"mem_hint_bytes,omitempty"`
}

// ActionGrant is the answer to an action start: the action may run now.
type ActionGrant struct {
	ID    string `json:"id"`    // pass it to the action's end
	Index int    `json:"index"` // its index among the agent's actions
	// QueuedS is how long the request waited: for its pod to come back
	// (ResumedS of it), for agent pacing and for admission.
	QueuedS  float64 `json:"queued_s"`
	ResumedS float64 `json:"resumed_s,omitempty"`
	Resumed  bool    `json:"resumed,omitempty"` // its pod was suspended and came back
}

// ActionResult is the body of POST .../actions/{id}/done.
type ActionResult struct {
	ExitCode int  `json:"exit_code"`
	OOM      bool `json:"oom,omitempty"`       // a task of it was OOM-killed
	TimedOut bool `json:"timed_out,omitempty"` // the harness stopped it at its timeout
	// PeakBytes is the action's peak memory if the harness measured it;
	// 0: the node's own samples of the container (every 100 ms).
	PeakBytes int64 `json:"peak_bytes,omitempty"`
	// Background says the action left processes running that the agent
	// needs later: its pod is then never suspended at this boundary.
	Background bool `json:"background,omitempty"`
}

// WaitRequest is the body of POST .../wait, the daemon's shape with the
// expected length added.
type WaitRequest struct {
	State     string  `json:"state"`                // "begin" or "end"
	ExpectedS float64 `json:"expected_s,omitempty"` // begin: the expected model wait, seconds
}

func podKey(namespace, name string) PodRef { return PodRef{Namespace: namespace, Name: name} }

// agentOf returns the pod's agent, making one when the pod has an adopted
// container or its Sandbox is one the suspender tracks (suspended: no
// container yet). The caller holds n.mu.
func (n *Node) agentOf(ref PodRef) *podAgent {
	if pa := n.agents[ref]; pa != nil {
		return pa
	}
	ctr := n.firstContainer(ref)
	if ctr == "" && (n.cfg.Suspender == nil || !n.cfg.Suspender.Suspended(ref)) {
		return nil
	}
	pa := &podAgent{pod: ref, up: make(chan struct{}),
		a: &controller.Agent{ID: ref.String(), Attempt: 1, Workflow: &trajectory.Workflow{ID: ref.String()}}}
	pa.setContainer(ctr)
	n.agents[ref] = pa
	return pa
}

// firstContainer is the pod's adopted container with the smallest id ("":
// none). The caller holds n.mu.
func (n *Node) firstContainer(ref PodRef) string {
	best := ""
	for id, c := range n.adopted {
		if c.pod.Namespace == ref.Namespace && c.pod.Name == ref.Name && (best == "" || id < best) {
			best = id
		}
	}
	return best
}

// setContainer makes ctr the agent's sandbox ("": its pod is gone).
func (pa *podAgent) setContainer(ctr string) {
	switch {
	case ctr != "" && pa.ctr == "":
		close(pa.up)
	case ctr == "" && pa.ctr != "":
		pa.up = make(chan struct{})
	}
	pa.ctr = ctr
	pa.a.SandboxID = ctr
}

// ActionStart is the start of an action of the pod's agent: it asks for
// the pod back if tenon suspended it and waits for its container, then
// waits for agent pacing (the agent's first action) and admission, and
// returns when the action may run, or with ctx's error.
func (n *Node) ActionStart(ctx context.Context, namespace, name string, req ActionRequest) (ActionGrant, error) {
	ref := podKey(namespace, name)
	t0 := n.cfg.Clock.Now()
	n.mu.Lock()
	pa := n.agentOf(ref)
	switch {
	case pa == nil:
		n.mu.Unlock()
		return ActionGrant{}, fmt.Errorf("%w: %s", ErrUnknownPod, ref)
	case pa.busy:
		n.mu.Unlock()
		return ActionGrant{}, fmt.Errorf("%w: pod %s", ErrActionRunning, ref)
	}
	pa.busy = true
	up, resumed := pa.up, pa.ctr == ""
	n.mu.Unlock()
	g, err := n.admit(ctx, pa, up, resumed, req)
	n.mu.Lock()
	defer n.mu.Unlock()
	if err != nil {
		pa.busy = false
		return ActionGrant{}, err
	}
	g.QueuedS = n.cfg.Clock.Now().Sub(t0).Seconds()
	return g, nil
}

// admit is ActionStart's waits, without n.mu held.
func (n *Node) admit(ctx context.Context, pa *podAgent, up chan struct{}, resumed bool, req ActionRequest) (ActionGrant, error) {
	t0 := n.cfg.Clock.Now()
	var out ActionGrant
	if resumed {
		if n.cfg.Suspender == nil || !n.cfg.Suspender.Resume(pa.pod) {
			return out, fmt.Errorf("%w: %s (its pod is gone and its Sandbox is not this node's)", ErrUnknownPod, pa.pod)
		}
		select {
		case <-up:
		case <-ctx.Done():
			return out, fmt.Errorf("waiting for pod %s to come back: %w", pa.pod, ctx.Err())
		}
		out.Resumed, out.ResumedS = true, n.cfg.Clock.Now().Sub(t0).Seconds()
		n.report(pa.pod, KindUnsuspended, "its Sandbox runs again: its harness asked for an action")
	}
	n.mu.Lock()
	ready := pa.ready
	n.mu.Unlock()
	if !ready {
		if err := n.cfg.Policy.AgentReady(ctx, pa.a); err != nil {
			return out, fmt.Errorf("agent pacing of pod %s: %w", pa.pod, err)
		}
	}
	n.mu.Lock()
	pa.ready = true
	act := trajectory.Action{Class: req.Class, Command: req.Command}
	if act.Class == "" {
		act.Class = "bash"
	}
	if req.MemHintBytes > 0 {
		mib := float64(req.MemHintBytes) / float64(units.MiB)
		act.Recorded = &trajectory.Recorded{PeakMiB: mib, AvgMiB: mib}
	}
	wf := pa.a.Workflow
	if len(wf.Actions) >= maxHistory {
		wf.Actions = append(wf.Actions[:0:0], wf.Actions[len(wf.Actions)-maxHistory/2:]...)
	}
	wf.Actions = append(wf.Actions, act)
	pa.a.Next = len(wf.Actions) - 1
	n.mu.Unlock()
	qStart := n.cfg.Clock.Now()
	g, err := n.cfg.Policy.ActionReady(ctx, pa.a, &wf.Actions[pa.a.Next])
	if err != nil {
		return out, fmt.Errorf("admission of an action of pod %s: %w", pa.pod, err)
	}
	now := n.cfg.Clock.Now()
	n.mu.Lock()
	n.seq++
	run := &actionRun{id: fmt.Sprintf("a%d", n.seq), index: pa.a.Next, class: act.Class, grant: g,
		start: now, queue: now.Sub(qStart), ctr: pa.ctr}
	pa.act = run
	n.mu.Unlock()
	out.ID, out.Index = run.id, run.index
	return out, nil
}

// ActionEnd ends the pod's running action id: the policy releases its
// admission and learns what it measured, and the boundary that follows
// goes to residency.
func (n *Node) ActionEnd(namespace, name, id string, res ActionResult) error {
	ref := podKey(namespace, name)
	now := n.cfg.Clock.Now()
	n.mu.Lock()
	pa := n.agents[ref]
	if pa == nil || pa.act == nil || pa.act.id != id {
		n.mu.Unlock()
		return fmt.Errorf("%w: action %s of pod %s", ErrNoAction, id, ref)
	}
	run := pa.act
	pa.act, pa.busy = nil, false
	pa.pinned = ""
	if res.Background {
		pa.pinned = "its last action left processes running"
	}
	n.mu.Unlock()
	o := controller.Outcome{Index: run.index, Class: run.class, Sandbox: run.ctr, PeakBytes: max(res.PeakBytes, run.peak),
		Duration: now.Sub(run.start), Queued: run.queue, Exit: res.ExitCode, OOM: res.OOM, TimedOut: res.TimedOut}
	if run.n > 0 {
		o.AvgBytes = run.sum / run.n
	}
	if run.ctr == "" || run.ctr != n.containerOf(pa) {
		o.Err = fmt.Errorf("%w: the container of pod %s went during the action", ErrUnknownPod, ref)
	}
	n.cfg.Policy.ActionDone(pa.a, run.grant, o)
	n.idle(pa, 0)
	return nil
}

// containerOf is pa's current container.
func (n *Node) containerOf(pa *podAgent) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return pa.ctr
}

// Wait is a model wait of the pod's agent beginning (with its expected
// length) or ending. A beginning is an idle boundary for residency; an
// end asks for a suspended pod back ahead of the next action.
func (n *Node) Wait(namespace, name string, req WaitRequest) error {
	ref := podKey(namespace, name)
	n.mu.Lock()
	pa := n.agentOf(ref)
	n.mu.Unlock()
	switch {
	case pa == nil:
		return fmt.Errorf("%w: %s", ErrUnknownPod, ref)
	case req.State == "begin":
		n.idle(pa, time.Duration(req.ExpectedS*float64(time.Second)))
	case req.State == "end":
		if n.cfg.Suspender != nil {
			n.cfg.Suspender.Resume(ref)
		}
	default:
		return fmt.Errorf("%w: wait state %q: want \"begin\" or \"end\"", ErrBadRequest, req.State)
	}
	return nil
}

// idle tells the suspender the pod's agent is at a boundary, idle, with
// wait its expected model wait.
func (n *Node) idle(pa *podAgent, wait time.Duration) {
	n.mu.Lock()
	ctr, busy, pinned := pa.ctr, pa.busy, pa.pinned
	n.mu.Unlock()
	if n.cfg.Suspender == nil || busy || ctr == "" {
		return
	}
	var ws int64
	if m, err := n.cfg.Backend.Memory(ctr); err == nil {
		ws = m.Usage
	}
	n.cfg.Suspender.Idle(pa.pod, residency.Observation{ActionExited: true, ResultRecorded: true, Pinned: pinned}, ws, wait)
}

// End ends the pod's agent (its harness is done with it): its admission
// slot and pacing count are given back. An unknown pod is not an error.
func (n *Node) End(namespace, name string) {
	n.mu.Lock()
	pa := n.agents[podKey(namespace, name)]
	delete(n.agents, podKey(namespace, name))
	ready := pa != nil && pa.ready
	n.mu.Unlock()
	if ready {
		n.cfg.Policy.AgentDone(pa.a, nil)
	}
}

// harnessUp tells the pod's agent that container ctr of its pod runs (it
// came back after a suspend). The caller holds n.mu.
func (n *Node) harnessUp(pod PodRef, ctr string) {
	if pa := n.agents[podKey(pod.Namespace, pod.Name)]; pa != nil && pa.ctr == "" {
		pa.setContainer(ctr)
	}
}

// harnessDown tells the pod's agent that container ctr went: another
// container of its pod takes over, else the agent waits for its pod to
// come back if tenon suspended it, and ends otherwise.
func (n *Node) harnessDown(pod PodRef, ctr string) {
	ref := podKey(pod.Namespace, pod.Name)
	n.mu.Lock()
	pa := n.agents[ref]
	if pa == nil || pa.ctr != ctr {
		n.mu.Unlock()
		return
	}
	pa.setContainer(n.firstContainer(ref))
	suspended := pa.ctr == "" && n.cfg.Suspender != nil && n.cfg.Suspender.Suspended(ref)
	gone := pa.ctr == "" && !suspended
	n.mu.Unlock()
	if suspended {
		n.report(pod, KindSuspended, "its Sandbox was suspended: the agent was idle and the node needed the memory; its harness's next action brings it back")
	}
	if gone {
		n.End(pod.Namespace, pod.Name)
	}
}

// sampleAction adds a sample of container ctr's usage to the action
// running in it, if any. The caller holds n.mu.
func (n *Node) sampleAction(pod PodRef, ctr string, usage int64) {
	pa := n.agents[podKey(pod.Namespace, pod.Name)]
	if pa == nil || pa.act == nil || pa.act.ctr != ctr {
		return
	}
	pa.act.peak = max(pa.act.peak, usage)
	pa.act.sum += usage
	pa.act.n++
}
