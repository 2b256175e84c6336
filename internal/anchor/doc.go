// Package anchor is tenon's memory-intent proxy (seed 001, Tide, "Anchor"):
// the component that stands outside both the harness and the tools, sees
// every phase boundary of the agent loop and turns each into a memory
// operation. Its parts are subpackages, so each can be wired into the
// process sandbox's in-sandbox executor or run on the host against any
// cgroup. The destroy intent (the seed's arena T, one child cgroup per tool
// invocation) is not here: the process backend carries it out
// (sandbox.ExecRequest.Scoped, internal/sandbox/process/scoped.go).
//
//   - pageout pages a process's private memory out (process_madvise
//     MADV_PAGEOUT) and back in (pageout intent, pagein);
//   - broker decides, from model and tool call begin/end events of every
//     agent sharing a harness, when the harness may be suspended and paged
//     out and when it must be paged in and resumed;
//   - suspend carries the broker's decisions out on a cgroup (freeze,
//     confirm, page out; page in, thaw) and ticks the broker on time;
//   - heap is the harness stand-in used to prove data survives page-out and
//     page-in (`tenon harness heap`);
//   - harness replays a trajectory against that heap in a process sandbox,
//     without and with intents (Scoped tools, broker-driven suspension),
//     and measures backing memory and harness time (`tenon harness replay`).
//
// This package holds only documentation; it owns nothing at run time.
package anchor
