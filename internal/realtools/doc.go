// Package realtools builds the real-tools workload: workflows that replay
// recorded agent tasks' own tool calls on the real repositories they
// worked on (../shared/repos: manifest.json, NAME.tar.gz, pylib/), instead
// of memory curves.
//
// For each repository of the manifest, Build reads its task's
// tool_calls.json from the AgentCgroup trace set (and the same run through
// internal/trajectory/agentcgroup, for its timeline and measurements) and
// makes one workflow:
//   - its workspace is the repository's archive, unpacked afresh for every
//     attempt and shown at /testbed, where the agent worked
//     (trajectory.Workspace; the replay driver unpacks it);
//   - a first action runs the manifest's setup steps (what stands in for
//     the agent's `pip install -e .`);
//   - every Edit and Write call becomes an edit action applied by
//     `tenon tool edit` (calls the agent's tool refused are skipped; paths
//     must lie under /testbed and not climb out);
//   - every Bash call in the manifest's run list runs for real under
//     `bash -c`, after the manifest's substitutions, with its env (<pylib>
//     is the pylib directory, bound read-only) and the agent's 120 s tool
//     limit (`timeout`: a command that hits it exits 124, as the agent saw
//     "Command timed out"); its command text, the predictor's input, is the
//     substituted command;
//   - every other call is skipped, its time added to the model wait before
//     the next action, so the timeline is the recorded one.
//
// Each action carries the trace's recorded duration, average and peak,
// with the average and peak capped at the manifest's figure for the task
// (Repo.FigureMiB): the traces' largest bursts came from packages and
// downloads that do not exist offline. The setup action, which the trace
// does not have, carries none.
//
// The package reads the manifest and the traces; it never copies them, and
// touches no sandbox or kernel interface.
package realtools
