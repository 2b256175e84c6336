// Package policy holds the comparison policies of the replay evaluation
// (seed 000 §5.1) and a registry that maps policy names, as typed on the
// command line, to constructors.
//
// Built in: "eager" (no control: the default Linux memory management) and
// "static-N" (at most N agents at once; an attempt waits for a slot in
// AgentReady and holds it until AgentDone). Other packages add theirs with
// Register: agent-level reservation, the runtime gate, water-level
// admission and tenon with its ablations.
//
// Policies here are pure decision logic: they never touch the kernel.
package policy
