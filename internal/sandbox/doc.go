// Package sandbox defines the Backend interface every sandbox runtime
// implements (create, exec an action, pause/resume, stats, destroy) and the
// sentinel errors backends return. Backends live in subpackages (process,
// later docker and firecracker); sandboxtest holds the contract suite each of
// them must pass.
//
// This package owns no kernel state and must not touch /sys or /proc.
package sandbox
