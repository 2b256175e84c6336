package live

import (
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/policy"
	"github.com/tenon-dev/tenon/internal/residency"
	"github.com/tenon-dev/tenon/internal/units"
)

func TestResidencyEventsPageOutIn(t *testing.T) {
	m, err := policy.Build("eager", policy.Options{Budget: units.GiB})
	if err != nil {
		t.Fatal(err)
	}
	var got []controller.Event
	p := &Policy{m: m, env: controller.Env{Emit: func(e controller.Event) { got = append(got, e) }}}
	p.residencyEvent(residency.Event{Kind: residency.EventPageOut, Agent: "a", Sandbox: "sb-1",
		Bytes: 64 << 20, Freed: 68 << 20, WorkingSet: 70 << 20, Duration: 100 * time.Millisecond})
	p.residencyEvent(residency.Event{Kind: residency.EventPageIn, Agent: "a", Sandbox: "sb-1",
		Bytes: 64 << 20, Duration: 200 * time.Millisecond, Reason: "demand"})
	p.residencyEvent(residency.Event{Kind: residency.EventPageInFailed, Agent: "a", Sandbox: "sb-1", Error: "boom"})
	if len(got) != 3 {
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
}
