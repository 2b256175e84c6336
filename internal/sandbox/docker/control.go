package docker

import (
	"context"
	"errors"
	"fmt"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/client"

	"github.com/tenon-dev/tenon/internal/cgroup"
	"github.com/tenon-dev/tenon/internal/sandbox"
)

// Pause freezes the container's cgroup and returns once it reports frozen.
//
// It writes the freezer itself rather than asking the engine (docker
// pause): an exec being started when the engine pauses the container
// leaves its runc process frozen inside the container while the shim holds
// the container's lock, and the engine's unpause then waits for that lock
// forever, hanging dockerd. Through the freezer, Resume never needs the
// engine, and an exec started meanwhile simply waits for the thaw, as in a
// frozen process-backend sandbox. The engine therefore does not report the
// container as paused; Info reads the freezer.
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
	if !pause {
		fctx, cancel := context.WithTimeout(ctx, b.cfg.FreezeTimeout)
		defer cancel()
		if err := bx.cg.Thaw(fctx); err != nil {
			return b.failed(ctx, bx, "resuming", err)
		}
		return nil
	}
	// A task runc is moving into the container (an exec starting) can keep
	// the freezer from settling for as long as it stays frozen: runc waits
	// for it outside the container. A freeze that times out thaws back
	// (cgroup.Freeze), which lets runc finish; so the timeout is split
	// over freezeTries attempts.
	for range freezeTries {
		fctx, cancel := context.WithTimeout(ctx, b.cfg.FreezeTimeout/freezeTries)
		err = bx.cg.Freeze(fctx)
		cancel()
		if err == nil || !errors.Is(err, cgroup.ErrFreezeTimeout) || ctx.Err() != nil {
			break
		}
	}
	if err != nil {
		return b.failed(ctx, bx, "pausing", err)
	}
	return nil
}

// freezeTries is how many freezes Pause tries within its FreezeTimeout.
const freezeTries = 3

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
	st := sandbox.Stats{Memory: m.Usage + m.Swap, WorkingSet: m.WorkingSet, Peak: m.Peak, OOMKills: m.OOMKills,
		Blocked: -1} // its threads' states are not read
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
	st.Frozen, _ = bx.cg.Frozen() // false where the freezer cannot be read
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

// remove force-removes a container; one that is already gone is fine. A
// frozen container is thawed first: the engine does not know it is paused,
// and its tasks could not die of the kill while frozen.
func (b *Backend) remove(ctx context.Context, bx *box) error {
	if bx.cg != nil {
		if frozen, err := bx.cg.Frozen(); err == nil && frozen {
			tctx, cancel := context.WithTimeout(ctx, b.cfg.FreezeTimeout)
			_ = bx.cg.Thaw(tctx)
			cancel()
		}
	}
	err := b.cli.ContainerRemove(ctx, bx.cid, container.RemoveOptions{Force: true, RemoveVolumes: true})
	if err != nil && !client.IsErrNotFound(err) {
		return daemonErr(b.cli, fmt.Errorf("removing sandbox %s (container %s): %w", bx.id, bx.cid[:12], err))
	}
	return nil
}
