// Package fake is an in-memory sandbox.Backend for tests that simulates
// memory instead of using it.
//
// Every sandbox charges a shared domain counter. An action that runs
// `tenon tool mem FLAGS` (the argv memtool.Args builds, after any program
// path) is parsed with memtool.ParseArgs and simulated: after the ramp the
// profile's peak is charged for the hold, then the retained level for the
// retain time; files and a background process's retained memory stay
// charged until the sandbox is destroyed. When a charge would take the
// domain above the configured budget, the action that made it is OOM-killed
// (ExecResult.OOMKilled, exit -1) and its charge is returned; the fake does
// not pick the largest victim as the kernel would, which keeps it
// deterministic.
//
// Shell actions understand a tiny language, one command per action:
// "sleep SECONDS", "exit N", "true", "false", "oom" (an OOM kill), "die"
// (the sandbox's init exits: ErrSandboxDead now and after). Anything else
// exits 0 at once.
//
// Time passes through the time package, so tests run it inside
// testing/synctest for speed and determinism. Pause stops the simulated
// clock of a sandbox's running action until Resume; timeouts count wall time.
// Stats.CPU grows by one CPU second per second while an action runs unpaused.
//
// The package touches no kernel state and starts no processes; the only
// file-system effect is creating Spec.Workspace when it is missing, as
// sandbox.Spec asks. It passes the contract suite (sandboxtest) with
// Capabilities.NoPrograms: the cases about real programs skip.
package fake
