// Package harness replays an agent's trajectory against a harness that
// holds a realistic heap inside a process sandbox, once without memory
// intents (baseline) and once with them (intents), and measures what each
// costs: the backing-memory integral and the harness time (seed 001, Tide,
// Figure 3).
//
// The harness is `tenon harness heap` (package anchor/heap) started in the
// background of the sandbox and moved, from the host, into its own child
// cgroup <sandbox>/harness (the seed's arena H), so that it can be frozen
// without freezing tools. The replay driver plays the harness's control
// flow from the host: for each action it waits the model time, then runs
// the tool in the sandbox and waits for its result.
//
// In intents mode the driver reports every phase to a suspension broker
// (anchor/broker): a model call begins, the reasoning ends (Lead before the
// response), the response arrives, a tool call begins and ends. The
// suspend actuator (anchor/suspend) freezes and pages the harness out once
// it has been idle for the grace, prefetches it when the reasoning ends and
// thaws it when the response arrives; tools run as Scoped actions, so each
// leaves nothing behind. Baseline runs the same schedule with unscoped
// tools and no broker.
//
// Measurement. The sandbox's memory cgroup (hierarchical: harness, tools,
// page cache) is sampled every Sample. RAM is usage (resident memory and
// page cache, what the host must back); compressed is the sandbox's swap
// times the zram compression ratio, the RAM the swapped pages still cost.
// Both integrals are taken above the floor, the sandbox's usage before the
// harness started, and reported in MiB·s; harness time is the replay's
// wall time from the first model call to the last tool result.
//
// The package owns the sandbox and groups it creates for one run and
// removes them when the run ends, also on failure.
package harness
