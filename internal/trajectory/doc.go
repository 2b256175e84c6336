// Package trajectory owns tenon's trajectory file format: one JSON object per
// line (JSONL), each a versioned Workflow of Actions. It loads files strictly
// (unknown fields and unsupported versions are errors that name the line and
// the field), writes them, validates workflows, and computes the quantities
// reports build on: per-action duration and peak, a workflow's profiled peak
// footprint, the oversubscription ratio, memory-time areas and the makespan
// lower bound.
//
// The format is documented field by field in docs/trajectory.md. Importers of
// recorded traces live in subpackages (agentcgroup). This package does no I/O
// besides the io.Reader/io.Writer it is given and LoadFile, and must not touch
// the kernel, sandboxes or the controller.
package trajectory
