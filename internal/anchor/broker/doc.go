// Package broker is the suspension broker of the anchor (seed 001, Tide,
// "Model request"): pure decision logic, with an injected clock, that says
// when a harness shared by several agents may be suspended and paged out
// and when it must be paged in and resumed.
//
// Events. The anchor reports, per agent, every call that leaves the
// harness: a model call (ModelBegin/ModelEnd, with ReasoningEnd when the
// model's reasoning stage ends before the response) and a tool call
// (ToolBegin/ToolEnd); agents come and go with AgentStart/AgentExit (an
// agent is also registered by its first call).
//
// Idle. The harness is idle when there is at least one live agent, every
// live agent has at least one model call in flight whose reasoning has not
// ended, and no agent has a tool call in flight. An agent with no call in
// flight is running in the harness (assembling context, parsing a
// response), so the harness is busy; an agent whose reasoning ended will
// be shortly, so a suspension started then would be paid back on the
// response's path (page-in while the response waits) for little gain. Tide
// also pages out while tools run; tenon does not: a harness is never paged
// out while any tool call is in flight, because tools share the sandbox and
// often read what the harness wrote, and the harness must be able to take
// the tool's result at once.
//
// Decisions. Tick returns Suspend once the harness has been idle for Grace
// (500 ms by default) without a break. The caller then freezes the harness
// and calls Confirm with the decision's epoch: only when Confirm returns true
// (no event arrived since the decision, so still no tool in flight and the
// frozen harness cannot start one) does it page the harness out. While
// suspended, ReasoningEnd returns Prefetch (page in, stay frozen) and any
// other event returns Resume (page in unless prefetched, then thaw): a
// response arriving is the usual one; a tool or model call beginning means
// the harness issued it before the freeze took hold.
//
// Broker is safe for concurrent use. It owns no process and no cgroup.
package broker
