package swarm

import "errors"

// Sentinel errors.
var (
	// ErrNoSiblings means the census arguments matched no cgroup and no pid.
	ErrNoSiblings = errors.New("swarm: no siblings matched (give cgroup paths or globs, --pid or --domain)")
	// ErrNotCgroup means a path given as a sibling is not a directory under
	// a mounted cgroup hierarchy.
	ErrNotCgroup = errors.New("swarm: not a cgroup directory")
	// ErrGopls means gopls is not installed and could not be installed.
	ErrGopls = errors.New("swarm: gopls unavailable")
	// ErrRepo means the workload repository could not be prepared.
	ErrRepo = errors.New("swarm: preparing the repository")
	// ErrConfig means an unknown configuration name.
	ErrConfig = errors.New("swarm: unknown configuration (want host-overlay, sandbox, ns-overlay or copied)")
	// ErrLSP means the language server broke the protocol or answered with
	// an error.
	ErrLSP = errors.New("swarm: language server")
)
