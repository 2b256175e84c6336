package swarm

import "fmt"

// Config is one arm of the census.
type Config string

// Configurations.
const (
	// HostOverlay: host processes, one overlayfs per sibling over a shared
	// read-only lower layer.
	HostOverlay Config = "host-overlay"
	// Sandbox: one process-backend sandbox (internal/sandbox/process: own
	// pid, mount, ipc, uts and net namespaces, own root file system) per
	// sibling, with its workspace an overlay over the shared read-only
	// lower layer. The seed's shared-read-only container arm.
	Sandbox Config = "sandbox"
	// NSOverlay: host processes with the overlay mounted in a private mount
	// namespace per sibling (unshare -m), at one path for every sibling.
	NSOverlay Config = "ns-overlay"
	// Copied: host processes, each sibling with its own copy of the repo.
	Copied Config = "copied"
)

// Configs lists every configuration in report order.
var Configs = []Config{HostOverlay, Sandbox, NSOverlay, Copied}

// ParseConfig checks a configuration name.
func ParseConfig(s string) (Config, error) {
	for _, c := range Configs {
		if string(c) == s {
			return c, nil
		}
	}
	return "", fmt.Errorf("%w: %q", ErrConfig, s)
}
