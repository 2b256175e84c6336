package process

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/tenon-dev/tenon/internal/cgroup"
	"github.com/tenon-dev/tenon/internal/imagestore"
)

// Config configures a Backend.
type Config struct {
	// StateDir holds the backend's files: sandboxes/<id>/rootfs (each
	// sandbox's writable layer), containers/ (libcontainer state) and
	// bin/ (the /usr/local/bin of every sandbox). Required; created if missing.
	StateDir string
	// CgroupParent is the group every sandbox's cgroup is created under
	// (<CgroupParent>/<id>), normally the workload domain. Required.
	CgroupParent string
	// Layout says where the cgroup controllers are mounted. Required.
	Layout *cgroup.Layout
	// Logger receives lifecycle events and the executors' stderr; nil discards.
	Logger *slog.Logger
	// Executable is the tenon binary bound at /usr/local/bin/tenon and run as
	// every sandbox's init; "" means os.Executable().
	Executable string
	// SalvageDir, when set, keeps the writable layers of the sandboxes an
	// earlier backend on the same StateDir left behind: New moves each
	// stale <StateDir>/sandboxes/<id>/rootfs to <SalvageDir>/<id> (same
	// file system; the rest of the stale sandbox is removed as usual), so a
	// caller can rebuild the sandbox from it with Spec.RootfsFrom. ""
	// deletes them.
	SalvageDir string
	// HostRoot is where the system directories (/usr, /etc, ...) are taken
	// from; "" means "/".
	HostRoot string
	// PidsMax caps the processes (tasks) of each sandbox, init included
	// (pids.max of its cgroup), so a fork bomb fails with EAGAIN instead
	// of filling the host's process table. 0 means DefaultPidsMax; < 0
	// leaves the sandboxes uncapped.
	PidsMax int64
	// NoSwap keeps each sandbox's memory out of swap (cgroup.Group.SetSwap
	// false, v2's memory.swap.max 0) except during PageOut, which lets it
	// swap while it pages the sandbox out. On cgroup v2 the caller sets it
	// instead of the domain's memory.swap.max 0 (cgroup.Domain.DisableSwap),
	// which would forbid page-out in every sandbox below.
	NoSwap bool
	// OOMGroup makes an OOM kill take the whole sandbox (memory.oom.group 1
	// on its cgroup, cgroup v2 only; v1's OOM killer takes one process
	// whatever this says): every process of the sandbox is killed, init
	// included, so its Exec returns the OOM-killed result and later calls
	// sandbox.ErrSandboxDead. The caller replaces the sandbox, as the
	// replay driver (a new attempt) and the daemon (after an OOM kill)
	// already do. tenon sets it on v2 (internal/app), where an OOM kill
	// should free a whole sandbox's memory, not leave it half-killed.
	OOMGroup bool
	// DiskMax caps, in bytes, what each sandbox writes to its writable
	// layer and to the workspace the backend makes for it (together): both
	// live on a sparse ext4 image of this size, loop-mounted on
	// <StateDir>/sandboxes/<id>/fs (internal/disk), so a write past it
	// fails with ENOSPC (ExecResult.DiskFull). A workspace the caller
	// passes (Spec.Workspace) is not covered. 0 means DefaultDiskMax; < 0
	// writes straight to the state directory's file system, unlimited.
	DiskMax int64
	// Images, when set, is the image store whose images sandboxes may
	// name (Spec.Image: a name or id `tenon image ls` lists): the image's
	// layer directories become the overlay lower directories of the
	// sandbox's root and its writable layer the overlay's upper
	// directory. nil leaves only the host image.
	Images *imagestore.Store
	// IdleLoop makes each sandbox's executor make way for the idle loop
	// after each action and after the sandbox starts: an idle sandbox's
	// init then holds ~0.1 MiB where the executor, the tenon binary with
	// every package it links, holds ~4 MiB (live, a sandbox's working set
	// between actions went from 5.1 to 1.2 MiB); the next action starts
	// the executor again first (~15 ms of CPU, 15-40 ms more per action
	// on a loaded 2-core host). Off by default: in the compressed live
	// replays of the real traces at 1 GiB it did not shorten the makespan
	// and lengthened the median workflow by 6-21 %
	// (bench/results/idle-loop-live.md). idle_linux.go says when the
	// executor stays resident anyway.
	IdleLoop bool
}

// DefaultDiskMax is the per-sandbox disk limit when Config.DiskMax is 0.
const DefaultDiskMax = 10 << 30

// DefaultPidsMax is the per-sandbox process cap when Config.PidsMax is 0.
const DefaultPidsMax = 1024

func (c *Config) fill() error {
	if c.StateDir == "" {
		return errors.New("process backend: Config.StateDir is required")
	}
	if c.Layout == nil {
		return errors.New("process backend: Config.Layout is required")
	}
	c.CgroupParent = strings.Trim(filepath.Clean("/"+c.CgroupParent), "/")
	if c.CgroupParent == "" {
		return errors.New("process backend: Config.CgroupParent is required")
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.HostRoot == "" {
		c.HostRoot = "/"
	}
	if c.PidsMax == 0 {
		c.PidsMax = DefaultPidsMax
	}
	if c.DiskMax == 0 {
		c.DiskMax = DefaultDiskMax
	}
	if c.Executable == "" {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("process backend: locating the tenon executable: %w", err)
		}
		c.Executable = exe
	}
	exe, err := filepath.EvalSymlinks(c.Executable)
	if err != nil {
		return fmt.Errorf("process backend: executable: %w", err)
	}
	c.Executable = exe
	abs, err := filepath.Abs(c.StateDir)
	if err != nil {
		return fmt.Errorf("process backend: state dir: %w", err)
	}
	c.StateDir = abs
	return nil
}
