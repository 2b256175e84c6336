package broker

import (
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/clock/clocktest"
)

// newFakeClock is a clock the test steps.
func newFakeClock() *clocktest.Manual { return clocktest.NewManual(time.Unix(1_000_000, 0)) }

// step is one tick-by-tick step: advance the clock, apply an event, expect
// a decision.
type step struct {
	advance time.Duration
	kind    Kind
	agent   string
	want    Action
	pageIn  bool // on Resume
}

func TestBrokerTickByTick(t *testing.T) {
	const ms = time.Millisecond
	tests := []struct {
		name  string
		grace time.Duration
		steps []step
	}{
		{"suspend after grace, resume on response", 0, []step{
			{0, ModelBegin, "a", Nothing, false},
			{499 * ms, Tick, "", Nothing, false},
			{1 * ms, Tick, "", Suspend, false},
			{100 * ms, Tick, "", Nothing, false},
			{3 * time.Second, ModelEnd, "a", Resume, true},
			{time.Second, Tick, "", Nothing, false},
		}},
		{"prefetch on reasoning end then resume without page-in", 0, []step{
			{0, ModelBegin, "a", Nothing, false},
			{600 * ms, Tick, "", Suspend, false},
			{time.Second, ReasoningEnd, "a", Prefetch, false},
			{0, ReasoningEnd, "a", Nothing, false},
			{200 * ms, ModelEnd, "a", Resume, false},
		}},
		{"reasoning end while running does nothing", 0, []step{
			{0, ModelBegin, "a", Nothing, false},
			{100 * ms, ReasoningEnd, "a", Nothing, false},
			{100 * ms, ModelEnd, "a", Nothing, false},
		}},
		{"reasoning end before the grace prevents the suspension", 0, []step{
			{0, ModelBegin, "a", Nothing, false},
			{300 * ms, ReasoningEnd, "a", Nothing, false},
			{time.Second, Tick, "", Nothing, false},
			{time.Second, ModelEnd, "a", Nothing, false},
			// The next call is idle again from its own begin.
			{0, ModelBegin, "a", Nothing, false},
			{500 * ms, Tick, "", Suspend, false},
		}},
		{"one agent's reasoning end keeps a shared harness busy", 0, []step{
			{0, ModelBegin, "a", Nothing, false},
			{0, ModelBegin, "b", Nothing, false},
			{100 * ms, ReasoningEnd, "b", Nothing, false},
			{time.Second, Tick, "", Nothing, false},
		}},
		{"short model call never suspends", 0, []step{
			{0, ModelBegin, "a", Nothing, false},
			{400 * ms, Tick, "", Nothing, false},
			{50 * ms, ModelEnd, "a", Nothing, false},
			{time.Second, Tick, "", Nothing, false},
		}},
		{"tool in flight blocks suspension however long", 0, []step{
			{0, ToolBegin, "a", Nothing, false},
			{0, ModelBegin, "b", Nothing, false},
			{10 * time.Second, Tick, "", Nothing, false},
			{0, ModelBegin, "a", Nothing, false},
			{10 * time.Second, Tick, "", Nothing, false},
			{0, ToolEnd, "a", Nothing, false},
			{499 * ms, Tick, "", Nothing, false},
			{1 * ms, Tick, "", Suspend, false},
		}},
		{"agent with no call keeps the harness busy", 0, []step{
			{0, AgentStart, "b", Nothing, false},
			{0, ModelBegin, "a", Nothing, false},
			{time.Second, Tick, "", Nothing, false},
			{0, ModelBegin, "b", Nothing, false},
			{500 * ms, Tick, "", Suspend, false},
		}},
		{"one agent's response resumes, grace restarts", 0, []step{
			{0, ModelBegin, "a", Nothing, false},
			{0, ModelBegin, "b", Nothing, false},
			{500 * ms, Tick, "", Suspend, false},
			{time.Second, ModelEnd, "b", Resume, true},
			{time.Second, Tick, "", Nothing, false},
			{0, ModelBegin, "b", Nothing, false},
			{499 * ms, Tick, "", Nothing, false},
			{1 * ms, Tick, "", Suspend, false},
		}},
		{"two model calls of one agent", 0, []step{
			{0, ModelBegin, "a", Nothing, false},
			{0, ModelBegin, "a", Nothing, false},
			{100 * ms, ModelEnd, "a", Nothing, false},
			{500 * ms, Tick, "", Suspend, false},
			{0, ModelEnd, "a", Resume, true},
			{time.Second, Tick, "", Nothing, false},
		}},
		{"tool begin while suspended resumes", 0, []step{
			{0, ModelBegin, "a", Nothing, false},
			{0, ModelBegin, "b", Nothing, false},
			{500 * ms, Tick, "", Suspend, false},
			{0, ToolBegin, "a", Resume, true},
			{time.Minute, Tick, "", Nothing, false},
		}},
		{"exit of the busy agent makes the rest idle", 0, []step{
			{0, ModelBegin, "a", Nothing, false},
			{0, AgentStart, "b", Nothing, false},
			{time.Second, Tick, "", Nothing, false},
			{0, AgentExit, "b", Nothing, false},
			{499 * ms, Tick, "", Nothing, false},
			{1 * ms, Tick, "", Suspend, false},
		}},
		{"exit with a tool in flight drops the tool", 0, []step{
			{0, ToolBegin, "b", Nothing, false},
			{0, ModelBegin, "a", Nothing, false},
			{0, AgentExit, "b", Nothing, false},
			{500 * ms, Tick, "", Suspend, false},
		}},
		{"no agents is not idle", 0, []step{
			{time.Minute, Tick, "", Nothing, false},
			{0, ModelBegin, "a", Nothing, false},
			{0, ModelEnd, "a", Nothing, false},
			{0, AgentExit, "a", Nothing, false},
			{time.Minute, Tick, "", Nothing, false},
		}},
		{"unmatched ends are ignored", 0, []step{
			{0, ToolEnd, "a", Nothing, false},
			{0, ModelEnd, "a", Nothing, false},
			{0, ModelBegin, "a", Nothing, false},
			{500 * ms, Tick, "", Suspend, false},
		}},
		{"configured grace", 2 * time.Second, []step{
			{0, ModelBegin, "a", Nothing, false},
			{1999 * ms, Tick, "", Nothing, false},
			{1 * ms, Tick, "", Suspend, false},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := newFakeClock()
			b := New(Options{Grace: tt.grace, Clock: clk})
			for i, s := range tt.steps {
				clk.Advance(s.advance)
				var d Decision
				switch s.kind {
				case AgentStart:
					d = b.AgentStart(s.agent)
				case AgentExit:
					d = b.AgentExit(s.agent)
				case ModelBegin:
					d = b.ModelBegin(s.agent)
				case ReasoningEnd:
					d = b.ReasoningEnd(s.agent)
				case ModelEnd:
					d = b.ModelEnd(s.agent)
				case ToolBegin:
					d = b.ToolBegin(s.agent)
				case ToolEnd:
					d = b.ToolEnd(s.agent)
				case Tick:
					d = b.Tick()
				}
				if d.Action != s.want || d.Action == Resume && d.PageIn != s.pageIn {
					t.Fatalf("step %d (%v %s after %v): %v pageIn=%v, want %v pageIn=%v",
						i, s.kind, s.agent, s.advance, d.Action, d.PageIn, s.want, s.pageIn)
				}
			}
		})
	}
}

func TestConfirmAndDeadline(t *testing.T) {
	clk := newFakeClock()
	b := New(Options{Clock: clk})
	if _, ok := b.Deadline(); ok {
		t.Fatal("deadline with no agents")
	}
	b.ModelBegin("a")
	dl, ok := b.Deadline()
	if !ok || !dl.Equal(clk.Now().Add(DefaultGrace)) {
		t.Fatalf("deadline %v %v, want now+grace", dl, ok)
	}
	clk.Advance(DefaultGrace)
	d := b.Tick()
	if d.Action != Suspend || d.IdleFor != DefaultGrace {
		t.Fatalf("tick: %+v", d)
	}
	if _, ok := b.Deadline(); ok {
		t.Error("deadline while suspended")
	}
	if !b.Confirm(d.Epoch) || b.Confirm(d.Epoch+1) {
		t.Error("Confirm: want true for the epoch only")
	}
	// A call that raced the freeze cancels the suspension.
	if r := b.ToolBegin("a"); r.Action != Resume {
		t.Fatalf("tool begin while suspended: %v", r.Action)
	}
	if b.Confirm(d.Epoch) || b.Suspended() {
		t.Error("suspension still confirmed after a tool began")
	}
	if m, tl := b.inFlight(); m != 1 || tl != 1 {
		t.Errorf("in flight %d model %d tools, want 1 and 1", m, tl)
	}
}
