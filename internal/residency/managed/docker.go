package managed

import (
	"github.com/tenon-dev/tenon/internal/sandbox"
	"github.com/tenon-dev/tenon/internal/sandbox/docker"
)

// Docker adapts the docker backend to Host. The docker backend exposes
// writable layers (WritableLayer(id), overlay2's UpperDir) and honours
// Spec.RootfsFrom (the captured layer becomes a fresh container's UpperDir
// before it starts) itself, and names the tasks an action left running
// (Procs, its ProcLister), so the restart-safe check names them instead of
// counting docker's two init tasks as one unknown process.
type Docker struct {
	*docker.Backend
}

// WrapDocker returns b as a sandbox.Backend that NewHost and NewManager accept.
func WrapDocker(b *docker.Backend) Docker { return Docker{Backend: b} }

var (
	_ sandbox.Backend = Docker{}
	_ LayerBackend    = Docker{}
	_ RootfsRestorer  = Docker{}
	_ ProcLister      = Docker{}
)
