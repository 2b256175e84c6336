package live

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tenon-dev/tenon/internal/clock/clocktest"
	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/gate"
	"github.com/tenon-dev/tenon/internal/policy"
	"github.com/tenon-dev/tenon/internal/sandbox"
	"github.com/tenon-dev/tenon/internal/sim"
	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/units"
	"github.com/tenon-dev/tenon/internal/workload"
)

// tapeHost is a fake clock, domain and backend whose answers are set, call
// by call, from a tape of the simulator's calls into its decision core:
// what the simulated host answered, the live adapter gets from its
// backend, domain and clock. It records what the adapter actuates.
type tapeHost struct {
	*clocktest.Manual
	mu     sync.Mutex
	avail  int64
	mem    map[string]int64
	cpu    map[string]time.Duration
	kernel map[string]gate.Sample // each sandbox's MemStall, Blocked and Frozen
	live   []string
	under  bool
	paused map[string]bool
	holdOn []bool
	budget int64
	// extraThreads counts the Samples that asked for the blocked threads
	// where the simulator had not read them.
	extraThreads int
}

// load loads one call's observations.
func (h *tapeHost) load(c policy.Call) {
	h.Set(c.T)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.avail = h.budget
	h.mem = map[string]int64{}
	for _, r := range c.Reads {
		switch {
		case r.Sandbox == "":
			h.avail = r.Value
		case r.OK:
			h.mem[r.Sandbox] = r.Value
		}
	}
	if c.Kind == "sample" {
		h.avail, h.under, h.live = c.Sample.Available, c.Sample.UnderOOM, nil
		h.cpu, h.kernel = map[string]time.Duration{}, map[string]gate.Sample{}
		for _, s := range c.Sample.Sandboxes {
			h.live = append(h.live, s.ID)
			h.mem[s.ID], h.cpu[s.ID], h.kernel[s.ID] = s.Footprint, s.CPU, s
		}
	}
}

// controller.Domain and controller.OOMHolder.
func (h *tapeHost) Usage() (int64, error) { return 0, nil }
func (h *tapeHost) Available() (int64, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.avail, nil
}
func (h *tapeHost) SetOOMHold(on bool) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.holdOn = append(h.holdOn, on)
	return nil
}
func (h *tapeHost) UnderOOM() (bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.under, nil
}

// sandbox.Backend: Stats answers from the tape; Pause and Resume record.
func (h *tapeHost) Name() string { return "tape" }
func (h *tapeHost) Create(context.Context, sandbox.Spec) (sandbox.Info, error) {
	return sandbox.Info{}, errors.New("tape: no sandboxes")
}
func (h *tapeHost) Exec(context.Context, string, sandbox.ExecRequest) (sandbox.ExecResult, error) {
	return sandbox.ExecResult{}, errors.New("tape: no exec")
}
func (h *tapeHost) Pause(_ context.Context, id string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.paused[id] = true
	return nil
}
func (h *tapeHost) Resume(_ context.Context, id string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.paused[id] = false
	return nil
}
func (h *tapeHost) Stats(_ context.Context, id string) (sandbox.Stats, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	m, ok := h.mem[id]
	if !ok {
		return sandbox.Stats{}, sandbox.ErrNotFound
	}
	k := h.kernel[id]
	return sandbox.Stats{Memory: m, CPU: h.cpu[id], MemStall: k.MemStall, Blocked: k.Blocked, Frozen: k.Frozen}, nil
}

// Sample is sandbox.Sampler: Stats, with the blocked threads only where
// the adapter asks for them. The simulator's samples (the tape) carry
// them where its machine wanted them and -1 (0 when frozen) elsewhere, so
// an adapter that asks where the simulator did not read them is caught
// here, and one that does not ask where it did differs in the sample call.
func (h *tapeHost) Sample(ctx context.Context, id string, threads bool) (sandbox.Stats, error) {
	st, err := h.Stats(ctx, id)
	switch {
	case err != nil:
	case threads && st.Blocked < 0:
		h.mu.Lock()
		h.extraThreads++
		h.mu.Unlock()
	case !threads && !st.Frozen:
		st.Blocked = -1
	case !threads:
		st.Blocked = 0
	}
	return st, err
}

func (h *tapeHost) Info(context.Context, string) (sandbox.Info, error) {
	return sandbox.Info{}, sandbox.ErrNotFound
}
func (h *tapeHost) Destroy(context.Context, string) error { return nil }
func (h *tapeHost) Close() error                          { return nil }

func (h *tapeHost) liveSandboxes() []controller.LiveSandbox {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]controller.LiveSandbox, len(h.live))
	for i, id := range h.live {
		out[i] = controller.LiveSandbox{Info: sandbox.Info{ID: id}}
	}
	return out
}

// TestLiveMatchesSim replays a simulated run's calls into the decision
// core through the live adapter (fake backend, domain and clock answering
// what the simulated host answered) and checks that the adapter drives
// its machine with the same calls, reads the same observations, gets the
// same decisions, and carries them out: the agents and actions it
// unblocks, the sandboxes it pauses and resumes, the OOM hold's writes.
func TestLiveMatchesSim(t *testing.T) {
	for _, pol := range []string{"tenon", "gate", "agent-reservation", "static-3"} {
		t.Run(pol, func(t *testing.T) { liveMatchesSim(t, pol) })
	}
}

func liveMatchesSim(t *testing.T, pol string) {
	wfs, err := workload.Generate("swe", 10, 7, workload.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sp, err := sim.ParsePolicy(pol)
	if err != nil {
		t.Fatal(err)
	}
	preds, err := sim.NewPredictors(wfs, sim.PredictorOptions{Seed: 1, Trees: 10})
	if err != nil {
		t.Fatal(err)
	}
	cfg := sim.Config{Workflows: wfs, Policy: sp, Budget: 2 * units.GiB, Retries: 5, Predictors: preds,
		Create: sim.DefaultCreate, Teardown: sim.DefaultTeardown, Rematerialize: sim.DefaultRematerialize, SandboxBase: 4 * units.MiB}
	var tape []policy.Call
	cfg.Trace = func(c policy.Call) { tape = append(tape, c) }
	res, err := sim.Run(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, c := range tape {
		kinds[c.Kind]++
	}
	if kinds["submit"] < len(wfs) || kinds["done"] == 0 || sp.Gate && kinds["sample"] == 0 || sp.Admission && kinds["schedule"] == 0 {
		t.Fatalf("the simulated run made too few calls to compare: %v", kinds)
	}
	mc, err := sim.MachineConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]*trajectory.Workflow{}
	for i := range wfs {
		byID[wfs[i].ID] = &wfs[i]
	}
	synctest.Test(t, func(t *testing.T) {
		replayTape(t, mc, tape, byID)
	})
	t.Logf("%s: %d calls replayed (%v); simulated makespan %v, OOM %d", pol, len(tape), kinds, res.Makespan, res.OOMEvents)
}

// replayTape drives a live adapter through tape and compares.
func replayTape(t *testing.T, mc policy.Config, tape []policy.Call, wfs map[string]*trajectory.Workflow) {
	m, err := policy.NewMachine(mc)
	if err != nil {
		t.Fatal(err)
	}
	var got []policy.Call
	m.SetTrace(func(c policy.Call) { got = append(got, c) })
	h := &tapeHost{Manual: clocktest.NewManual(time.Time{}), budget: mc.Budget, paused: map[string]bool{}}
	p := New(m, Options{})
	// As the replay's: it restarts preempted attempts and reruns
	// rolled-back actions, as the simulator does.
	env := controller.Env{Clock: h, Budget: mc.Budget, Domain: h, Backend: h, Live: h.liveSandboxes,
		RestartsPreempted: true, RerunsRolledBack: true, Emit: func(controller.Event) {}}
	p.mu.Lock()
	p.env = env
	p.mu.Unlock()
	p.armHold(env)
	loop, err := p.newGateLoop(env)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()

	agents := map[string]*controller.Agent{}
	startedCh := map[string]chan error{}
	grantCh := map[string]chan controller.Grant{}
	grants := map[string]controller.Grant{}
	// unblocked collects the agents whose AgentReady or ActionReady returned.
	unblocked := func() (started []string, admitted []string) {
		synctest.Wait()
		for id, ch := range startedCh {
			select {
			case err := <-ch:
				if err != nil {
					t.Fatalf("AgentReady(%s) = %v", id, err)
				}
				started = append(started, id)
				delete(startedCh, id)
			default:
			}
		}
		for id, ch := range grantCh {
			select {
			case g := <-ch:
				grants[id] = g
				admitted = append(admitted, id)
				delete(grantCh, id)
			default:
			}
		}
		slices.Sort(started)
		slices.Sort(admitted)
		return started, admitted
	}
	sortedAgents := func(ids []string) []string {
		out := slices.Clone(ids)
		slices.Sort(out)
		return out
	}
	grantAgents := func(gs []policy.Grant) []string {
		var out []string
		for _, g := range gs {
			out = append(out, g.Agent)
		}
		return sortedAgents(out)
	}
	for i, c := range tape {
		h.load(c)
		before := len(got)
		var started, admitted []string
		switch c.Kind {
		case "submit":
			a := &controller.Agent{ID: c.Agent, Attempt: c.Attempt, Workflow: wfs[c.Agent]}
			agents[c.Agent] = a
			ch := make(chan error, 1)
			startedCh[c.Agent] = ch
			go func() { ch <- p.AgentReady(ctx, a) }()
			started, admitted = unblocked()
		case "end":
			p.AgentDone(agents[c.Agent], nil)
			started, admitted = unblocked()
		case "ready":
			a := agents[c.Agent]
			a.Next, a.SandboxID = c.Index, c.Sandbox
			ch := make(chan controller.Grant, 1)
			grantCh[c.Agent] = ch
			act := &wfs[c.Agent].Actions[c.Index]
			go func() {
				g, err := p.ActionReady(ctx, a, act)
				if err != nil {
					t.Errorf("ActionReady(%s) = %v", a.ID, err)
				}
				ch <- g
			}()
			started, admitted = unblocked()
		case "done":
			d := c.Done
			if d.AfterBytes > 0 { // the backend answers the floor the simulator measured
				h.mu.Lock()
				h.mem[agents[c.Agent].SandboxID] = d.AfterBytes
				h.mu.Unlock()
			}
			p.ActionDone(agents[c.Agent], grants[c.Agent], controller.Outcome{Index: d.Index, PeakBytes: d.PeakBytes,
				AvgBytes: d.AvgBytes, Duration: d.Duration, OOM: d.OOM})
			started, admitted = unblocked()
		case "schedule":
			p.schedule(ctx)
			started, admitted = unblocked()
		case "pace":
			p.pace(ctx)
			started, admitted = unblocked()
		case "sample":
			holds := len(h.holdOn)
			if _, err := loop.Tick(ctx); err != nil {
				t.Fatalf("call %d: gate tick: %v", i, err)
			}
			for _, sd := range c.Step.Gate.Sandboxes {
				if h.paused[sd.ID] == sd.Allowed {
					t.Fatalf("call %d (t=%v): sandbox %s paused=%v, the gate decided allowed=%v", i, c.T, sd.ID, h.paused[sd.ID], sd.Allowed)
				}
			}
			wantWrites := map[policy.HoldAction][]bool{policy.HoldRelease: {false}, policy.HoldRearm: {true}}[c.Step.Hold]
			if w := h.holdOn[holds:]; !slices.Equal(w, wantWrites) {
				t.Fatalf("call %d (t=%v): hold %v wrote %v, want %v", i, c.T, c.Step.Hold, w, wantWrites)
			}
		default:
			t.Fatalf("call %d: the simulator made a %q call, which this test does not replay", i, c.Kind)
		}
		if len(got) != before+1 {
			t.Fatalf("call %d (%s %s t=%v): the adapter made %d machine calls, want 1", i, c.Kind, c.Agent, c.T, len(got)-before)
		}
		// Compared as printed: an empty slice and a nil one are the same call.
		if g, w := fmt.Sprintf("%+v", got[before]), fmt.Sprintf("%+v", c); g != w {
			t.Fatalf("call %d differs:\n live %s\n sim  %s", i, g, w)
		}
		// What the adapter carried out: the agents it let start and the
		// actions it admitted are the machine's decision.
		if want := sortedAgents(c.Started); !slices.Equal(started, want) {
			t.Fatalf("call %d (%s t=%v): agents started %v, the machine decided %v", i, c.Kind, c.T, started, want)
		}
		if want := grantAgents(c.Grants); !slices.Equal(admitted, want) {
			t.Fatalf("call %d (%s t=%v): actions admitted %v, the machine decided %v", i, c.Kind, c.T, admitted, want)
		}
	}
	if len(startedCh) != 0 || len(grantCh) != 0 {
		t.Fatalf("still blocked at the end: %d agents, %d actions", len(startedCh), len(grantCh))
	}
	if h.extraThreads > 0 {
		t.Fatalf("the adapter read the blocked threads in %d samples where the simulator did not (policy.Machine.WantsThreads)", h.extraThreads)
	}
	if err := p.disarmHold(); err != nil {
		t.Fatal(err)
	}
	if mc.Gate && mc.Hold > 0 && (len(h.holdOn) < 2 || !h.holdOn[0] || h.holdOn[len(h.holdOn)-1]) {
		t.Fatalf("hold writes %v: want armed first and disarmed last", h.holdOn)
	}
}
