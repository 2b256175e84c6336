package live

import (
	"strings"

	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/residency"
)

// residencyEvent writes the residency manager's boundary, teardown,
// rematerialization, page-out, page-in and deferred-thaw events to the
// run's event log.
func (p *Policy) residencyEvent(e residency.Event) {
	ep := p.views.emit.Load()
	if ep == nil {
		return
	}
	emit := *ep
	ev := controller.Event{Policy: p.Name(), Workflow: e.Agent, Sandbox: e.Sandbox, Reason: e.Reason, Error: e.Error}
	switch e.Kind {
	case residency.EventBoundary:
		ev.Kind, ev.Restartable = controller.EventBoundary, strings.HasPrefix(e.Reason, residency.LabelRestartable)
		ev.WorkingSetBytes = e.WorkingSet // the sandbox's floor while its agent waits
	case residency.EventTeardown:
		ev.Kind, ev.BytesCaptured, ev.StateBytes, ev.WorkingSetBytes = controller.EventTeardown, e.Bytes, e.StateBytes, e.WorkingSet
		ev.DurationS = e.Duration.Seconds()
	case residency.EventRemat:
		ev.Kind, ev.DurationS = controller.EventRemat, e.Duration.Seconds()
	case residency.EventPageOut:
		ev.Kind, ev.PagedBytes, ev.FreedBytes, ev.WorkingSetBytes = controller.EventPageOut, e.Bytes, e.Freed, e.WorkingSet
		ev.DurationS = e.Duration.Seconds()
	case residency.EventPageIn:
		ev.Kind, ev.PagedBytes, ev.DurationS = controller.EventPageIn, e.Bytes, e.Duration.Seconds()
	case residency.EventThawDeferred:
		ev.Kind, ev.DurationS = controller.EventThawDeferred, e.Duration.Seconds()
	case residency.EventTeardownFailed, residency.EventRematFailed, residency.EventAgentLost, residency.EventDestroyFailed,
		residency.EventPageOutFailed, residency.EventPageInFailed:
		ev.Kind, ev.Reason = controller.EventError, "residency "+string(e.Kind)
		ev.DurationS = e.Duration.Seconds()
	default:
		return
	}
	emit(ev)
}
