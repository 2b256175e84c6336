package broker

import (
	"fmt"
	"sync"
	"time"

	"github.com/tenon-dev/tenon/internal/clock"
)

// DefaultGrace is how long the harness must be idle before it is suspended.
const DefaultGrace = 500 * time.Millisecond

// Action is what the caller must do.
type Action int

// Actions.
const (
	// Nothing: no change.
	Nothing Action = iota
	// Suspend: freeze the harness, Confirm, then page it out.
	Suspend
	// Prefetch: page the suspended harness in; keep it frozen.
	Prefetch
	// Resume: page the harness in (unless prefetched) and thaw it.
	Resume
)

func (a Action) String() string {
	switch a {
	case Nothing:
		return "nothing"
	case Suspend:
		return "suspend"
	case Prefetch:
		return "prefetch"
	case Resume:
		return "resume"
	}
	return fmt.Sprintf("action(%d)", int(a))
}

// Decision is the broker's answer to an event or a tick.
type Decision struct {
	Action Action
	// Epoch numbers suspensions; Confirm takes the Suspend decision's.
	Epoch uint64
	// PageIn is set on Resume when the harness was not prefetched.
	PageIn bool
	// IdleFor is how long the harness had been idle, on Suspend.
	IdleFor time.Duration
}

// Event kinds, for observers.
type Kind int

// Event kinds.
const (
	AgentStart Kind = iota
	AgentExit
	ModelBegin
	ReasoningEnd
	ModelEnd
	ToolBegin
	ToolEnd
	Tick
)

// Event is one input of the broker, as seen by an Observer.
type Event struct {
	Kind  Kind
	Agent string
	At    time.Time
}

// Observer sees every event and the decision it produced, in the order the
// broker applied them, while the broker's lock is held (it must not call
// the broker).
type Observer func(Event, Decision)

// state of the harness.
type state int

const (
	running state = iota
	suspended
	prefetched
)

// agent counts one agent's calls in flight; reasoned counts the model calls
// whose reasoning stage has ended (their responses are near).
type agent struct{ model, reasoned, tools int }

// Broker decides suspension of one harness.
type Broker struct {
	grace    time.Duration
	clock    clock.Clock
	observer Observer

	mu        sync.Mutex
	agents    map[string]*agent
	tools     int // tool calls in flight, all agents
	idleSince time.Time
	state     state
	epoch     uint64
}

// Options configure a Broker.
type Options struct {
	Grace    time.Duration // DefaultGrace when 0
	Clock    clock.Clock   // clock.Real when nil
	Observer Observer      // nil for none
}

// New returns a broker for one harness.
func New(o Options) *Broker {
	if o.Grace <= 0 {
		o.Grace = DefaultGrace
	}
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	return &Broker{grace: o.Grace, clock: o.Clock, observer: o.Observer, agents: make(map[string]*agent)}
}

// AgentStart registers an agent of the harness (with no call in flight it
// keeps the harness busy until its first model call).
func (b *Broker) AgentStart(id string) Decision { return b.apply(AgentStart, id) }

// AgentExit forgets an agent and its calls.
func (b *Broker) AgentExit(id string) Decision { return b.apply(AgentExit, id) }

// ModelBegin: the agent's request left for the model.
func (b *Broker) ModelBegin(id string) Decision { return b.apply(ModelBegin, id) }

// ReasoningEnd: the model's reasoning stage ended; the response is near.
func (b *Broker) ReasoningEnd(id string) Decision { return b.apply(ReasoningEnd, id) }

// ModelEnd: the model's response is being forwarded to the agent.
func (b *Broker) ModelEnd(id string) Decision { return b.apply(ModelEnd, id) }

// ToolBegin: the agent delegated a tool call.
func (b *Broker) ToolBegin(id string) Decision { return b.apply(ToolBegin, id) }

// ToolEnd: the tool call's result is being forwarded to the agent.
func (b *Broker) ToolEnd(id string) Decision { return b.apply(ToolEnd, id) }

// Tick returns Suspend when the harness has been idle for the grace period.
func (b *Broker) Tick() Decision { return b.apply(Tick, "") }

// Confirm says whether the suspension of epoch still holds: no event has
// arrived since it was decided. The caller freezes the harness, then pages
// it out only if Confirm returns true, and otherwise thaws it.
func (b *Broker) Confirm(epoch uint64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.state == suspended && b.epoch == epoch && b.tools == 0
}

// Deadline is when Tick will next return Suspend if nothing happens
// before; ok is false when the harness is not idle or already suspended.
func (b *Broker) Deadline() (t time.Time, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state != running || b.idleSince.IsZero() {
		return time.Time{}, false
	}
	return b.idleSince.Add(b.grace), true
}

// Suspended says whether the harness is suspended (or being suspended).
func (b *Broker) Suspended() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.state != running
}

func (b *Broker) apply(k Kind, id string) Decision {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.clock.Now()
	d := b.step(k, id, now)
	if b.observer != nil {
		b.observer(Event{Kind: k, Agent: id, At: now}, d)
	}
	return d
}

// step applies one event; b.mu is held.
func (b *Broker) step(k Kind, id string, now time.Time) Decision {
	var a *agent
	if k != Tick {
		a = b.agents[id]
		if a == nil && k != AgentExit {
			a = &agent{}
			b.agents[id] = a
		}
	}
	switch k {
	case AgentExit:
		if a != nil {
			b.tools -= a.tools
			delete(b.agents, id)
		}
	case ModelBegin:
		a.model++
	case ModelEnd:
		if a.model > 0 {
			a.model--
		}
		a.reasoned = min(a.reasoned, a.model)
	case ReasoningEnd:
		if a.reasoned < a.model {
			a.reasoned++
		}
	case ToolBegin:
		a.tools++
		b.tools++
	case ToolEnd:
		if a.tools > 0 {
			a.tools--
			b.tools--
		}
	}
	b.updateIdle(now)

	if b.state != running {
		switch k {
		case Tick, AgentStart:
			return Decision{}
		case ReasoningEnd:
			if b.state == suspended {
				b.state = prefetched
				return Decision{Action: Prefetch, Epoch: b.epoch}
			}
			return Decision{}
		}
		d := Decision{Action: Resume, Epoch: b.epoch, PageIn: b.state == suspended}
		b.state = running
		if !b.idleSince.IsZero() {
			b.idleSince = now // a new idle period starts with the resume
		}
		return d
	}
	if k == Tick && !b.idleSince.IsZero() && now.Sub(b.idleSince) >= b.grace {
		b.state = suspended
		b.epoch++
		return Decision{Action: Suspend, Epoch: b.epoch, IdleFor: now.Sub(b.idleSince)}
	}
	return Decision{}
}

// updateIdle starts or ends the idle period; b.mu is held.
func (b *Broker) updateIdle(now time.Time) {
	idle := len(b.agents) > 0 && b.tools == 0
	for _, a := range b.agents {
		if a.model-a.reasoned <= 0 {
			idle = false
			break
		}
	}
	switch {
	case !idle:
		b.idleSince = time.Time{}
	case b.idleSince.IsZero():
		b.idleSince = now
	}
}
