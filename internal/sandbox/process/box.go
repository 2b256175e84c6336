//go:build linux

package process

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/opencontainers/runc/libcontainer"
	"golang.org/x/sys/unix"

	"github.com/tenon-dev/tenon/internal/cgroup"
	"github.com/tenon-dev/tenon/internal/sandbox"
)

// killTimeout bounds the wait for a killed init to be reaped.
const killTimeout = 5 * time.Second

// box is one live sandbox.
type box struct {
	id        string
	spec      sandbox.Spec
	dir       string // <StateDir>/sandboxes/<id>
	rootfs    string // the container's root (an image's overlay)
	layer     string // the writable layer (rootfs on the host image)
	workspace string
	// image is the root of a sandbox of an imported image (nil on the
	// host's); release ends the sandbox's hold on the image.
	image        *imageRoot
	release      func()
	ownWorkspace bool
	// disk is the mount point of the sandbox's disk image ("" without
	// Config.DiskMax): a full one makes ExecResult.DiskFull.
	disk       string
	cgroupPath string
	layout     *cgroup.Layout
	mountinfo  string // the host's <proc>/self/mountinfo
	procRoot   string // the host's /proc
	log        *slog.Logger

	container *libcontainer.Container
	proc      *libcontainer.Process
	initPid   int
	group     cgroup.Group
	oomGroup  bool // an OOM kill takes the whole sandbox (Config.OOMGroup)
	// hibernates: the executor makes way for the idle loop when idle
	// (Config.IdleLoop, idle_linux.go).
	hibernates bool
	// hibMu is held while the executor execs the idle loop, and by every
	// freeze (freeze): exec waits for the process's other threads to
	// exit, which frozen threads never do, and the group would stay
	// FREEZING, with whoever froze it waiting (v1).
	hibMu sync.Mutex

	conn    *os.File // the host's end of the executor channel
	enc     *json.Encoder
	results chan response
	dead    chan struct{} // closed when init has exited and been reaped

	execMu sync.Mutex // one action at a time
	seq    uint64
	paused atomic.Bool
	// hostPSI: the group's memory pressure is the host's (v1), not read
	// again (Backend.activity).
	hostPSI atomic.Bool

	destroyOnce sync.Once
	destroyErr  error
}

// watch waits for init and closes dead.
func (bx *box) watch() {
	_, err := bx.proc.Wait()
	bx.log.Debug("sandbox init exited", "err", err)
	close(bx.dead)
}

// readResults forwards the executor's messages until the channel closes.
// A channel that fails otherwise is logged: no result can come after it,
// and an exec then waits for its deadline.
func (bx *box) readResults() {
	dec := json.NewDecoder(bx.conn)
	for {
		var r response
		if err := dec.Decode(&r); err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrClosed) && !bx.isDead() {
				bx.log.Warn("executor channel unreadable: no more results from this sandbox", "err", err)
			}
			return
		}
		select {
		case bx.results <- r:
		case <-bx.dead:
			return
		}
	}
}

// freeze freezes the sandbox's group, never while its executor execs the
// idle loop (hibMu).
func (bx *box) freeze(ctx context.Context) error {
	bx.hibMu.Lock()
	defer bx.hibMu.Unlock()
	return bx.group.Freeze(ctx)
}

func (bx *box) isDead() bool {
	select {
	case <-bx.dead:
		return true
	default:
		return false
	}
}

// destroy tears the sandbox down once; later calls return the first result.
func (bx *box) destroy(ctx context.Context) error {
	bx.destroyOnce.Do(func() { bx.destroyErr = bx.teardown(ctx) })
	return bx.destroyErr
}

func (bx *box) teardown(ctx context.Context) error {
	var errs []error
	if bx.group != nil {
		tctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		if err := bx.group.Thaw(tctx); err != nil {
			bx.log.Warn("thawing before destroy", "err", err)
		}
		cancel()
	}
	if bx.proc != nil {
		if !bx.isDead() {
			// SIGKILL to a pid namespace's init kills the whole namespace.
			_ = syscall.Kill(bx.initPid, syscall.SIGKILL)
		}
		t := time.NewTimer(killTimeout)
		select {
		case <-bx.dead:
		case <-t.C:
			errs = append(errs, fmt.Errorf("sandbox init %d not reaped after %s", bx.initPid, killTimeout))
		}
		t.Stop()
	}
	if bx.group != nil {
		kctx, cancel := context.WithTimeout(ctx, killTimeout)
		if err := bx.group.KillAll(kctx); err != nil && !errors.Is(err, cgroup.ErrNotExist) {
			errs = append(errs, fmt.Errorf("killing sandbox tasks: %w", err))
		}
		cancel()
	}
	if bx.conn != nil {
		bx.conn.Close()
	}
	if bx.container != nil {
		if err := bx.container.Destroy(); err != nil {
			errs = append(errs, fmt.Errorf("destroying container: %w", err))
		}
	}
	if bx.group != nil {
		// Empty the group's memory before removing it on v1: a removed
		// memcg keeps the page cache of files that outlive the sandbox (a
		// teardown parks its layer's files) charged to the domain, as
		// active file the budget cannot use, until the kernel reclaims
		// under the limit (cgroup.Drop; measured on Linux 6.18). Not on v2
		// yet: there a sandbox's drop is not measured (a tool scope's
		// memory.reclaim hung in Go's poller on EAGAIN until cgroup's
		// writes went around it, fs.go).
		var err error
		if m, ok := bx.layout.Controller(cgroup.Memory); ok && m.Version == cgroup.V1 {
			_, err = cgroup.Drop(bx.layout, bx.group)
		} else {
			err = bx.group.Delete()
		}
		if err != nil && !errors.Is(err, cgroup.ErrNotExist) && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("removing cgroup: %w", err))
		}
	}
	if err := unmountUnder(bx.mountinfo, bx.dir); err != nil {
		// Removing the directory now would delete through what is still
		// mounted under it (the sandbox's disk image, its overlay on the
		// image's shared layers), and releasing the image would let a gc
		// remove layers a mounted overlay still uses: both stay, for the
		// backend's start-up reaping (reapStale) to retry.
		errs = append(errs, fmt.Errorf("%w (the sandbox's files and its image hold are kept)", err))
	} else {
		if err := os.RemoveAll(bx.dir); err != nil {
			errs = append(errs, fmt.Errorf("removing sandbox files: %w", err))
		}
		if bx.release != nil {
			bx.release()
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("destroying sandbox %s: %w", bx.id, err)
	}
	return nil
}

// diskFullBelow is the free space under which a sandbox's disk counts as
// full: less than a write of a few blocks needs.
const diskFullBelow = 1 << 20

// diskFull reports whether the sandbox's disk image has less than
// diskFullBelow bytes free (false without one).
func (bx *box) diskFull() bool {
	if bx.disk == "" {
		return false
	}
	var st unix.Statfs_t
	if err := unix.Statfs(bx.disk, &st); err != nil {
		return false
	}
	return int64(st.Bavail)*int64(st.Bsize) < diskFullBelow
}
