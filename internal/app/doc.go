// Package app is tenon's composition root: it builds the policies, opens
// the sandbox backends and workload domains, and runs what the subcommands
// of cmd/tenon ask for (a side-by-side replay under several policies, the
// benchmark matrix, the daemon, the simulated host). The CLI parses flags and calls one
// function here; this package turns the flags' values into running parts
// and tears them down again.
//
// Every policy is built in one place (buildPolicy), once per run, and every
// backend is opened in one place (openBackend). Results are returned to the
// caller to print; the only files written here are the event logs and the
// benchmark's results files.
package app
