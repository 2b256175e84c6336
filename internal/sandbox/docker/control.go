package docker

import (
	"context"
	"fmt"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/client"

	"github.com/tenon-dev/tenon/internal/sandbox"
)

// freezeWait bounds how long Pause and Resume wait for the cgroup freezer
// to report the new state.
const freezeWait = 5 * time.Second

// Pause freezes the container (the engine's pause, the cgroup freezer) and
// returns once its cgroup reports frozen.
func (b *Backend) Pause(ctx context.Context, id string) error {
	return b.setPaused(ctx, id, true)
}

// Resume thaws a paused container and returns once its cgroup reports thawed.
func (b *Backend) Resume(ctx context.Context, id string) error {
	return b.setPaused(ctx, id, false)
}

func (b *Backend) setPaused(ctx context.Context, id string, pause bool) error {
	bx, err := b.lookup(id)
	if err != nil {
		return err
	}
	if frozen, err := bx.cg.Frozen(); err == nil && frozen == pause {
		return nil
	}
	op, call := "unpausing", b.cli.ContainerUnpause
	if pause {
		op, call = "pausing", b.cli.ContainerPause
	}
	if err := call(ctx, bx.cid); err != nil {
		return b.failed(ctx, bx, op, err)
	}
	deadline := time.Now().Add(freezeWait)
	for {
		frozen, err := bx.cg.Frozen()
		if err != nil {
			return b.failed(ctx, bx, "reading the freezer", err)
		}
		if frozen == pause {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("sandbox %s: %s: the cgroup freezer did not reach frozen=%v in %v", id, op, pause, freezeWait)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// Stats reads the container's cgroup.
func (b *Backend) Stats(ctx context.Context, id string) (sandbox.Stats, error) {
	bx, err := b.lookup(id)
	if err != nil {
		return sandbox.Stats{}, err
	}
	m, err := bx.cg.Memory()
	if err != nil {
		return sandbox.Stats{}, b.failed(ctx, bx, "reading memory", err)
	}
	st := sandbox.Stats{Memory: m.Usage + m.Swap, WorkingSet: m.WorkingSet, Peak: m.Peak, OOMKills: m.OOMKills}
	if st.Peak != 0 && st.Peak < m.Usage {
		st.Peak = m.Usage
	}
	if cpu, err := bx.cg.CPUUsage(); err == nil {
		st.CPU = cpu
	}
	pids, err := bx.cg.Pids()
	if err != nil {
		return sandbox.Stats{}, b.failed(ctx, bx, "listing tasks", err)
	}
	st.Procs = len(pids)
	return st, nil
}

// Info describes a live sandbox; Paused comes from its cgroup freezer.
func (b *Backend) Info(ctx context.Context, id string) (sandbox.Info, error) {
	bx, err := b.lookup(id)
	if err != nil {
		return sandbox.Info{}, err
	}
	frozen, err := bx.cg.Frozen()
	if err != nil {
		in, ierr := b.cli.ContainerInspect(ctx, bx.cid)
		if ierr != nil || in.State == nil {
			return sandbox.Info{}, b.failed(ctx, bx, "reading the freezer", err)
		}
		frozen = in.State.Paused
	}
	return bx.info(frozen), nil
}

// Destroy removes the container and its anonymous volumes. Destroying an
// unknown or already destroyed sandbox is not an error. The workspace stays.
func (b *Backend) Destroy(ctx context.Context, id string) error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return sandbox.ErrClosed
	}
	bx := b.boxes[id]
	if bx != nil {
		delete(b.boxes, id)
	}
	b.mu.Unlock()
	if bx == nil {
		return nil
	}
	return b.remove(ctx, bx)
}

// remove force-removes a container; one that is already gone is fine.
func (b *Backend) remove(ctx context.Context, bx *box) error {
	err := b.cli.ContainerRemove(ctx, bx.cid, container.RemoveOptions{Force: true, RemoveVolumes: true})
	if err != nil && !client.IsErrNotFound(err) {
		return daemonErr(b.cli, fmt.Errorf("removing sandbox %s (container %s): %w", bx.id, bx.cid[:12], err))
	}
	return nil
}
