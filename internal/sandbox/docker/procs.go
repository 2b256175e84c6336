package docker

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Proc is one task of a sandbox besides its init tasks.
type Proc struct {
	PID  int    // host pid
	Comm string // <ProcRoot>/<pid>/comm; "" when unreadable
}

// Procs lists the tasks of the sandbox's container other than its init
// tasks (docker-init and "sleep infinity"): the processes an action left
// running.
func (b *Backend) Procs(ctx context.Context, id string) ([]Proc, error) {
	bx, err := b.lookup(id)
	if err != nil {
		return nil, err
	}
	pids, err := bx.cg.Pids()
	if err != nil {
		return nil, b.failed(ctx, bx, "listing tasks", err)
	}
	var out []Proc
	for _, p := range pids {
		if bx.keep[p] {
			continue
		}
		comm, _ := os.ReadFile(filepath.Join(b.cfg.ProcRoot, strconv.Itoa(p), "comm"))
		out = append(out, Proc{PID: p, Comm: strings.TrimSpace(string(comm))})
	}
	return out, nil
}
