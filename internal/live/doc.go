// Package live drives a policy's decision core (policy.Machine) on a live
// host: it implements controller.Policy, the blocking interface the replay
// driver and the daemon call from one goroutine per agent, on top of the
// synchronous state machine the simulator drives too.
//
// The adapter owns everything the machine must not: the goroutines (the
// gate loop every control period, the admission loop every 50 ms or when
// an action becomes ready or ends), the clock, and the calls to the
// backend and the domain: sandbox stats and the domain's available memory
// as observations, pause and resume as the gate's actuator (or pacing in
// a sched_ext scheduler, Options.Pacing, injected like residency), the domain's
// OOM hold, and memory.high limits for AgentCgroup's Low actions (its
// emulation on cgroup v1). Calls into the machine are serialised by one
// mutex; agents blocked in AgentReady or ActionReady wait on a channel the
// adapter closes when the machine decides they may go.
//
// Residency (teardown of idle sandboxes and their rematerialization) is
// injected by the composition root (Options.Residency): this package
// imports no concrete backend.
package live
