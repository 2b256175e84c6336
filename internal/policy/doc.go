// Package policy holds the policies a replay or the daemon runs under
// (seed 000 §5.1) and a registry that maps policy names, as typed on the
// command line, to constructors.
//
// Baselines: "eager" (no control), "static-N" (at most N agents at once),
// "agent-reservation" (each agent reserves its profiled lifetime peak) and
// "agentcgroup" (AgentCgroup-like memory.high throttling of Low actions).
// tenon: "tenon" composes water-level admission (internal/admission) with
// the runtime gate (internal/gate) and residency (internal/residency), and
// "gate", "admission" and the tenon-* ablations switch mechanisms off.
//
// Beyond seed 000, tenon's composition paces new agents, counts predicted
// peaks in admission's physical check, caps the gate's demand of a sandbox
// at its admitted action's predicted remaining growth, lets a retried
// action reserve what its earlier attempt needed, keeps two liveness
// rules, and runs the gate on the replay's clock: under a time scale s its
// period, horizon and waits are multiplied by s, since the tools' ramps are
// s times as short (tenon.go, admitctl.go and gatectl.go say why). Its
// default admission margin keeps one red region of the gate free
// (AdmissionMargin); the current predictor assumes at least a
// task's largest same-class peak so far, or its class's p90 for the first
// (predict.ClassFloor); and on cgroup v1 the gate arms the domain's OOM hold,
// so an allocation at the budget waits for memory instead of being killed
// and the OOM killer acts only after DMax with no sandbox making progress, or
// after ten times that (hold.go). The admitter's decision steps are pure functions
// (admitstep.go) that the simulator (internal/sim) calls unchanged.
//
// Policies observe sandboxes through the backend (Stats, Pause, Resume);
// only agentcgroup writes cgroup files itself (its memory.high emulation).
package policy
