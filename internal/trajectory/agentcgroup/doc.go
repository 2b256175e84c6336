// Package agentcgroup imports the per-run records published by the
// AgentCgroup project (docker-stats samples in resources.json, tool calls in
// tool_calls.json, run metadata in results.json) as tenon trajectories: one
// Workflow per run, one Mem-profile Action per tool call, so that an imported
// workflow replays anywhere. The exact conversion rules are in
// docs/trajectory.md ("Importing AgentCgroup traces") and on Convert.
//
// It reads files only; it never copies the source data anywhere.
package agentcgroup
