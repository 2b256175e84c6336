//go:build linux

package process

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/tenon-dev/tenon/internal/sandbox"
)

// Procs lists the processes of the sandbox's cgroup (and its descendants,
// the tool scopes), except the sandbox init, which is also its executor:
// what an action left running. The list is sorted by pid.
func (b *Backend) Procs(ctx context.Context, id string) ([]sandbox.Proc, error) {
	bx, err := b.get(id)
	if err != nil {
		return nil, err
	}
	pids, err := bx.group.Pids()
	if err != nil {
		return nil, fmt.Errorf("processes of sandbox %s: %w", id, err)
	}
	slices.Sort(pids)
	root := b.cfg.Layout.ProcRoot
	if root == "" {
		root = "/proc"
	}
	var out []sandbox.Proc
	for _, pid := range slices.Compact(pids) {
		if pid == bx.initPid {
			continue
		}
		comm, err := os.ReadFile(filepath.Join(root, strconv.Itoa(pid), "comm"))
		if errors.Is(err, os.ErrNotExist) {
			continue // exited meanwhile
		}
		out = append(out, sandbox.Proc{PID: pid, Comm: string(bytes.TrimSpace(comm))})
	}
	return out, nil
}
