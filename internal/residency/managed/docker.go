package managed

import (
	"context"

	"github.com/tenon-dev/tenon/internal/sandbox"
	"github.com/tenon-dev/tenon/internal/sandbox/docker"
	"github.com/tenon-dev/tenon/internal/sandbox/process"
)

// Docker adapts the docker backend to Host. The docker backend exposes
// writable layers (WritableLayer(id), overlay2's UpperDir) and honours
// Spec.RootfsFrom (the captured layer becomes a fresh container's UpperDir
// before it starts) itself; Docker adds the ProcLister view of the tasks
// an action left running, so the restart-safe check names them instead of
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

// Procs lists the sandbox's tasks other than its init tasks.
func (d Docker) Procs(ctx context.Context, id string) ([]process.Proc, error) {
	ps, err := d.Backend.Procs(ctx, id)
	if err != nil {
		return nil, err
	}
	out := make([]process.Proc, len(ps))
	for i, p := range ps {
		out[i] = process.Proc{PID: p.PID, Comm: p.Comm}
	}
	return out, nil
}
