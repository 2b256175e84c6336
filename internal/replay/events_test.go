package replay

import (
	"context"
	"sync"
	"testing"

	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/controller/controllertest"
	"github.com/tenon-dev/tenon/internal/sandbox"
	"github.com/tenon-dev/tenon/internal/trajectory"
)

// recording is a policy that checks the driver's call contract and emits a
// pause and a resume around every action, as a gate would.
type recording struct {
	controllertest.Nop
	t   *testing.T
	env controller.Env

	mu                     sync.Mutex
	started, stopped       int
	agentsIn, agentsOut    int
	grants                 map[uint64]bool
	nextGrant              uint64
	doneTwice, unknownDone int
	up                     map[string]bool
	upCount, downCount     int
	liveSeen               int
}

func newRecording(t *testing.T) controller.Policy {
	return &recording{t: t, grants: map[uint64]bool{}, up: map[string]bool{}}
}

func (r *recording) Name() string { return "recording" }

func (r *recording) Start(_ context.Context, env controller.Env) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.started++
	r.env = env
	return nil
}

func (r *recording) Stop(context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stopped++
	return nil
}

func (r *recording) AgentReady(ctx context.Context, a *controller.Agent) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.agentsIn++
	return ctx.Err()
}

func (r *recording) AgentDone(a *controller.Agent, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.agentsOut++
	if a.SandboxID != "" {
		r.t.Errorf("AgentDone(%s) with sandbox %s still set", a.ID, a.SandboxID)
	}
}

func (r *recording) ActionReady(ctx context.Context, a *controller.Agent, act *trajectory.Action) (controller.Grant, error) {
	r.mu.Lock()
	r.nextGrant++
	g := controller.Grant{ID: r.nextGrant, Charge: 1234, Peak: 5678, Heavy: true}
	r.grants[g.ID] = true
	if act != a.Action() {
		r.t.Errorf("ActionReady: act is not a.Action() (next %d)", a.Next)
	}
	r.liveSeen = max(r.liveSeen, len(r.env.Live()))
	for _, l := range r.env.Live() {
		if l.Info.ID == a.SandboxID && l.Running {
			r.t.Errorf("sandbox %s marked running before its action was admitted", l.Info.ID)
		}
	}
	r.mu.Unlock()
	r.env.Emit(controller.Event{Kind: controller.EventPause, Workflow: a.ID, Sandbox: a.SandboxID})
	r.env.Emit(controller.Event{Kind: controller.EventResume, Workflow: a.ID, Sandbox: a.SandboxID})
	return g, ctx.Err()
}

func (r *recording) ActionDone(a *controller.Agent, g controller.Grant, o controller.Outcome) {
	r.mu.Lock()
	defer r.mu.Unlock()
	held, ok := r.grants[g.ID]
	switch {
	case !ok:
		r.unknownDone++
	case !held:
		r.doneTwice++
	}
	r.grants[g.ID] = false
	if o.Index != a.Next {
		r.t.Errorf("Outcome.Index %d, agent at %d", o.Index, a.Next)
	}
}

func (r *recording) SandboxUp(a *controller.Agent, info sandbox.Info) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.upCount++
	r.up[info.ID] = true
}

func (r *recording) SandboxDown(a *controller.Agent, id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.downCount++
	if !r.up[id] {
		r.t.Errorf("SandboxDown(%s) without SandboxUp", id)
	}
	delete(r.up, id)
}

func TestPolicyContractAndEventKinds(t *testing.T) {
	var p *recording
	wfs := append(burst(), runWF("shell", "false", "sleep 1"), runWF("doomed", "oom"), runWF("slow", "sleep 100"), runWF("dies", "die"))
	res, evs, be := replay(t, func(t *testing.T) controller.Policy {
		p = newRecording(t).(*recording)
		return p
	}, wfs, func(c *Config) { c.MaxRetries = 1; c.ActionTimeout = 0 })
	checkAccounting(t, res, evs, len(wfs), be)

	if p.started != 1 || p.stopped != 1 {
		t.Errorf("Start called %d times, Stop %d, want 1 and 1", p.started, p.stopped)
	}
	if p.agentsIn != res.Attempts || p.agentsOut != res.Attempts {
		t.Errorf("AgentReady %d AgentDone %d, want %d attempts each", p.agentsIn, p.agentsOut, res.Attempts)
	}
	for id, held := range p.grants {
		if held {
			t.Errorf("grant %d never released", id)
		}
	}
	if p.doneTwice+p.unknownDone != 0 {
		t.Errorf("ActionDone twice %d, unknown grant %d", p.doneTwice, p.unknownDone)
	}
	if p.upCount == 0 || p.upCount != p.downCount || len(p.up) != 0 {
		t.Errorf("SandboxUp %d SandboxDown %d, left up %v", p.upCount, p.downCount, p.up)
	}
	if p.liveSeen == 0 {
		t.Error("Env.Live never listed a sandbox")
	}

	kinds := []string{
		controller.EventSubmit, controller.EventAgentStart, controller.EventSandboxCreate, controller.EventSandboxDestroy,
		controller.EventAdmit, controller.EventActionStart, controller.EventActionDone, controller.EventOOM,
		controller.EventSandboxLost, controller.EventRetry, controller.EventWorkflowDone, controller.EventWorkflowFailed,
		controller.EventPause, controller.EventResume, controller.EventSample,
	}
	for _, k := range kinds {
		if count(evs, k) == 0 {
			t.Errorf("no %q event in the log", k)
		}
	}
	var last float64
	for i, e := range evs {
		if e.Policy != "recording" {
			t.Errorf("event %d (%s) policy %q", i, e.Kind, e.Policy)
		}
		if e.T < last-1e-9 && e.Kind != controller.EventSample {
			// samples are stamped before they are written; others in order
			t.Errorf("event %d (%s) at t=%g after t=%g", i, e.Kind, e.T, last)
		}
		last = max(last, e.T)
		switch e.Kind {
		case controller.EventActionDone:
			if e.Workflow == "" || e.Action == nil || e.Class == "" || e.Command == "" || e.Exit == nil || e.ActionKind == "" || e.Sandbox == "" {
				t.Errorf("action_done record incomplete: %+v", e)
			}
			if e.ActionKind == "mem" && (e.PeakBytes == 0 || e.AvgBytes == 0 || e.DurationS == 0 || e.ProfilePeakBytes == 0) {
				t.Errorf("mem action_done without measurements: %+v", e)
			}
		case controller.EventAdmit:
			if e.Charge != 1234 || e.PredPeak != 5678 || !e.Heavy || e.Action == nil {
				t.Errorf("admit record incomplete: %+v", e)
			}
		case controller.EventPause:
			if e.T == 0 || e.Workflow == "" {
				t.Errorf("policy event not stamped: %+v", e)
			}
		}
	}
}
