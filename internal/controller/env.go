package controller

import (
	"log/slog"

	"github.com/tenon-dev/tenon/internal/clock"
	"github.com/tenon-dev/tenon/internal/sandbox"
)

// Domain observes the workload domain, the parent cgroup every sandbox
// lives under. A cgroup-backed implementation reads the domain group's
// memory; the fake sandbox backend implements it from its simulated counter.
type Domain interface {
	// Usage is the domain's current memory use in bytes.
	Usage() (int64, error)
	// Available is the budget minus Usage, floored at 0.
	Available() (int64, error)
}

// OOMHolder is a Domain that can hold allocations at its limit instead of
// OOM-killing: a task whose allocation would pass the budget waits in the
// kernel until memory is freed or the hold is released (cgroup v1
// memory.oom_control; on v2 throttling above memory.high; see
// cgroup.Domain.SetOOMHold).
type OOMHolder interface {
	SetOOMHold(on bool) error
	// UnderOOM reports whether tasks are waiting for memory under the hold.
	UnderOOM() (bool, error)
}

// HoldLine is an OOMHolder whose hold slows allocators above a line below
// the limit without stopping them (cgroup v2's memory.high): the policy
// stops them itself by freezing their sandboxes while they wait, and
// thaws them below the line (policy.Machine.SetHoldFreeze).
type HoldLine interface {
	OOMHolder
	// HoldFreezes reports whether the hold needs the freezing (v2).
	HoldFreezes() bool
	// AboveHoldLine reports whether the domain's usage is above the line.
	AboveHoldLine() (bool, error)
}

// Env is what a policy is started with.
type Env struct {
	Clock  clock.Clock
	Budget int64  // domain memory budget in bytes
	Domain Domain // nil when the driver has no domain to observe
	// Backend runs the sandboxes; policies may read Stats and Pause/Resume.
	Backend sandbox.Backend
	// Live lists the live sandboxes at the time of the call.
	Live func() []LiveSandbox
	// Emit records an event; Emit stamps the time and domain memory.
	Emit   func(Event)
	Logger *slog.Logger
	// RestartsPreempted is set by a driver that restarts an attempt whose
	// action the policy preempted (ErrPreempted) without counting it as a
	// retry, in a fresh sandbox: the replay. Only then may a Preempter
	// policy preempt.
	RestartsPreempted bool
	// PreemptsIdle is set by a driver that also runs each attempt under
	// an AttemptPreempter policy's PreemptibleAttempt and restarts one it
	// cancelled with ErrPreempted (with RestartsPreempted): the replay.
	// Only then may the policy end an attempt that runs no action.
	PreemptsIdle bool
	// RerunsRolledBack is set by a driver that runs an action the policy
	// rolled back (ErrRolledBack) again in the same sandbox, the attempt
	// going on: the replay. Only then may a Preempter policy roll back.
	RerunsRolledBack bool
}

// LiveSandbox is one sandbox the driver knows to be up.
type LiveSandbox struct {
	Agent *Agent       // read-only for policies; the driver goroutine owns it
	Info  sandbox.Info // Info.CgroupPath locates its cgroup
	// Running is true while an action executes in the sandbox (between
	// action_start and action_done); false during model waits.
	Running bool
}
