package docker

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tenon-dev/tenon/internal/sandbox"
)

// Procs lists the tasks of the sandbox's container other than its init
// tasks (docker-init and "sleep infinity"): the processes an action left
// running.
func (b *Backend) Procs(ctx context.Context, id string) ([]sandbox.Proc, error) {
	bx, err := b.lookup(id)
	if err != nil {
		return nil, err
	}
	pids, err := bx.cg.Pids()
	if err != nil {
		return nil, b.failed(ctx, bx, "listing tasks", err)
	}
	var out []sandbox.Proc
	for _, p := range pids {
		if bx.keep[p] {
			continue
		}
		comm, _ := os.ReadFile(filepath.Join(b.cfg.ProcRoot, strconv.Itoa(p), "comm"))
		out = append(out, sandbox.Proc{PID: p, Comm: strings.TrimSpace(string(comm))})
	}
	return out, nil
}
