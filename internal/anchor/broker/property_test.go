package broker

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// model is an independent account of the harness, kept by an Observer from
// the events in the order the broker applied them.
type model struct {
	t         *testing.T
	grace     time.Duration
	model     map[string]int
	tools     map[string]int
	idleSince time.Time // zero when not idle by the model's own account
	suspended bool
	suspends  int
	resumes   int
	failures  []string
}

func (m *model) observe(e Event, d Decision) {
	switch e.Kind {
	case AgentStart:
		m.model[e.Agent] += 0
		m.tools[e.Agent] += 0
	case AgentExit:
		delete(m.model, e.Agent)
		delete(m.tools, e.Agent)
	case ModelBegin:
		m.model[e.Agent]++
		m.tools[e.Agent] += 0
	case ModelEnd:
		if m.model[e.Agent] > 0 {
			m.model[e.Agent]--
		}
	case ToolBegin:
		m.tools[e.Agent]++
		m.model[e.Agent] += 0
	case ToolEnd:
		if m.tools[e.Agent] > 0 {
			m.tools[e.Agent]--
		}
	}
	idle := len(m.model) > 0
	tools := 0
	for a := range m.model {
		if m.model[a] == 0 {
			idle = false
		}
		tools += m.tools[a]
	}
	if tools > 0 {
		idle = false
	}
	if !idle {
		m.idleSince = time.Time{}
	} else if m.idleSince.IsZero() {
		m.idleSince = e.At
	}
	fail := func(format string, a ...any) {
		m.failures = append(m.failures, fmt.Sprintf("%v %s at %v: ", e.Kind, e.Agent, e.At.UnixMilli())+fmt.Sprintf(format, a...))
	}
	switch d.Action {
	case Suspend:
		m.suspends++
		if tools > 0 {
			fail("suspend with %d tool calls in flight", tools)
		}
		if !idle {
			fail("suspend while an agent is not waiting on the model")
		}
		if idle && e.At.Sub(m.idleSince) < m.grace {
			fail("suspend after %v idle, grace %v", e.At.Sub(m.idleSince), m.grace)
		}
		if m.suspended {
			fail("suspend while suspended")
		}
		m.suspended = true
	case Resume:
		m.resumes++
		if !m.suspended {
			fail("resume while running")
		}
		m.suspended = false
		if idle {
			m.idleSince = e.At // grace restarts with the resume
		}
	case Prefetch:
		if !m.suspended {
			fail("prefetch while running")
		}
	}
}

// TestBrokerConcurrentAgents: many agents call begin/end in random order
// from their own goroutines while the clock advances and a ticker ticks;
// the model checks every decision in the broker's own order.
func TestBrokerConcurrentAgents(t *testing.T) {
	const (
		agents = 5
		rounds = 200
	)
	clk := newFakeClock()
	m := &model{t: t, grace: DefaultGrace, model: map[string]int{}, tools: map[string]int{}}
	b := New(Options{Clock: clk, Observer: m.observe})

	var stop atomic.Bool
	var bg sync.WaitGroup
	var confirmed atomic.Int64
	bg.Go(func() { // the clock and the ticker, with a simulated actuator
		for !stop.Load() {
			clk.Advance(time.Duration(rand.IntN(200)) * time.Millisecond)
			if d := b.Tick(); d.Action == Suspend && b.Confirm(d.Epoch) {
				confirmed.Add(1)
			}
			time.Sleep(20 * time.Microsecond)
		}
	})
	// waitClock lets fake time pass: until the clock moved by d.
	waitClock := func(d time.Duration) {
		until := clk.Now().Add(d)
		for clk.Now().Before(until) {
			time.Sleep(10 * time.Microsecond)
		}
	}
	var wg sync.WaitGroup
	for i := range agents {
		id := fmt.Sprintf("agent-%d", i)
		r := rand.New(rand.NewPCG(uint64(i), 7))
		wg.Go(func() {
			b.AgentStart(id)
			for range rounds {
				switch r.IntN(6) {
				case 0, 1, 4, 5: // a model call, sometimes with a reasoning end
					b.ModelBegin(id)
					waitClock(time.Duration(r.IntN(1500)) * time.Millisecond)
					if r.IntN(2) == 0 {
						b.ReasoningEnd(id)
					}
					b.ModelEnd(id)
				case 2: // a tool call
					b.ToolBegin(id)
					waitClock(time.Duration(r.IntN(300)) * time.Millisecond)
					b.ToolEnd(id)
				case 3: // a parallel model and tool call
					b.ModelBegin(id)
					b.ToolBegin(id)
					waitClock(time.Duration(r.IntN(300)) * time.Millisecond)
					b.ToolEnd(id)
					waitClock(time.Duration(r.IntN(800)) * time.Millisecond)
					b.ModelEnd(id)
				}
			}
			b.AgentExit(id)
		})
	}
	wg.Wait()
	stop.Store(true)
	bg.Wait()

	for _, f := range m.failures {
		t.Error(f)
	}
	t.Logf("%d suspends (%d confirmed), %d resumes", m.suspends, confirmed.Load(), m.resumes)
	if m.suspends == 0 {
		t.Error("no suspension happened: the test exercised nothing")
	}
	if mc, tc := b.inFlight(); mc != 0 || tc != 0 {
		t.Errorf("%d model and %d tool calls still in flight after every agent exited", mc, tc)
	}
}
