package live

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/policy"
	"github.com/tenon-dev/tenon/internal/residency"
	"github.com/tenon-dev/tenon/internal/sandbox"
	"github.com/tenon-dev/tenon/internal/units"
)

func TestResidencyEventsPageOutIn(t *testing.T) {
	m, err := policy.Build("eager", policy.Options{Budget: units.GiB})
	if err != nil {
		t.Fatal(err)
	}
	var got []controller.Event
	p := New(m, Options{})
	emit := func(e controller.Event) { got = append(got, e) }
	p.views.emit.Store(&emit)
	p.residencyEvent(residency.Event{Kind: residency.EventPageOut, Agent: "a", Sandbox: "sb-1",
		Bytes: 64 << 20, Freed: 68 << 20, WorkingSet: 70 << 20, Duration: 100 * time.Millisecond})
	p.residencyEvent(residency.Event{Kind: residency.EventPageIn, Agent: "a", Sandbox: "sb-1",
		Bytes: 64 << 20, Duration: 200 * time.Millisecond, Reason: "demand"})
	p.residencyEvent(residency.Event{Kind: residency.EventPageInFailed, Agent: "a", Sandbox: "sb-1", Error: "boom"})
	p.residencyEvent(residency.Event{Kind: residency.EventThawDeferred, Agent: "a", Sandbox: "sb-1", Error: "at the budget", Duration: 50 * time.Millisecond})
	if len(got) != 4 {
		t.Fatalf("events = %+v", got)
	}
	if e := got[0]; e.Kind != controller.EventPageOut || e.Sandbox != "sb-1" || e.Workflow != "a" ||
		e.PagedBytes != 64<<20 || e.FreedBytes != 68<<20 || e.WorkingSetBytes != 70<<20 || e.DurationS != 0.1 {
		t.Errorf("page_out = %+v", e)
	}
	if e := got[1]; e.Kind != controller.EventPageIn || e.PagedBytes != 64<<20 || e.DurationS != 0.2 || e.Reason != "demand" {
		t.Errorf("page_in = %+v", e)
	}
	if e := got[2]; e.Kind != controller.EventError || e.Reason != "residency page_in_failed" || e.Error != "boom" {
		t.Errorf("page_in_failed = %+v", e)
	}
	if e := got[3]; e.Kind != controller.EventThawDeferred || e.Sandbox != "sb-1" || e.Error != "at the budget" || e.DurationS != 0.05 {
		t.Errorf("thaw_deferred = %+v", e)
	}
}

// callLog records backend pauses and resumes and a staller's calls.
type callLog struct {
	sandbox.Backend // unused methods panic
	calls           []string
	paged           bool // what UnstallSandbox reports
}

func (c *callLog) Pause(_ context.Context, id string) error {
	c.calls = append(c.calls, "pause "+id)
	return nil
}
func (c *callLog) Resume(_ context.Context, id string) error {
	c.calls = append(c.calls, "resume "+id)
	return nil
}
func (c *callLog) StallSandbox(id string) { c.calls = append(c.calls, "stall "+id) }
func (c *callLog) UnstallSandbox(_ context.Context, id string) (bool, error) {
	c.calls = append(c.calls, "unstall "+id)
	return c.paged, nil
}

// TestActuatorStalls: a denied sandbox is paused, then stalled; an allowed
// one is unstalled and resumed, unless the unstall paged it back in (which
// thawed it); without a staller the actuator only pauses and resumes.
func TestActuatorStalls(t *testing.T) {
	ctx := context.Background()
	c := &callLog{}
	a := backendActuator{b: c, staller: func() controller.SandboxStaller { return c }}
	a.Deny(ctx, "s")
	a.Allow(ctx, "s")
	c.paged = true
	a.Allow(ctx, "s")
	want := []string{"pause s", "stall s", "unstall s", "resume s", "unstall s"}
	if !slices.Equal(c.calls, want) {
		t.Errorf("calls = %v, want %v", c.calls, want)
	}
	c.calls = nil
	plain := backendActuator{b: c, staller: func() controller.SandboxStaller { return nil }}
	plain.Deny(ctx, "s")
	plain.Allow(ctx, "s")
	if want := []string{"pause s", "resume s"}; !slices.Equal(c.calls, want) {
		t.Errorf("without a staller: calls = %v, want %v", c.calls, want)
	}
}
