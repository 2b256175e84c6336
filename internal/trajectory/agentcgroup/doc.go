// Package agentcgroup imports the per-run records published by the
// AgentCgroup project (docker-stats samples in resources.json, tool calls in
// tool_calls.json, run metadata in results.json) as tenon trajectories: one
// Workflow per run, one Mem-profile Action per tool call, so that an imported
// workflow replays anywhere. The exact conversion rules are in
// docs/trajectory.md ("Importing AgentCgroup traces") and on Convert.
//
// Real trace directories hold damaged and partial runs, and an older layout
// whose tool calls carry a start time only. No run aborts an import: a run
// that cannot be read or holds no usable call or sample is skipped with the
// reason; what an imported run lacks is repaired or dropped and counted by
// kind (Report.Warnings). A call without an end ends at the first memory
// sample before the next call's start that reaches the highest level of
// those samples, when that is more than NoiseMiB above the level before the
// call (its memory rises while it runs), else at its start (most calls are
// far shorter than the 1 s sampling period; the rest of the gap is model
// time); the level it leaves behind is the last sample before the next
// call.
//
// It reads files only; it never copies the source data anywhere.
package agentcgroup
