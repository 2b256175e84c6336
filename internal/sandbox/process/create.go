//go:build linux

package process

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/opencontainers/runc/libcontainer"
	"golang.org/x/sys/unix"

	"github.com/tenon-dev/tenon/internal/cgroup"
	"github.com/tenon-dev/tenon/internal/disk"
	"github.com/tenon-dev/tenon/internal/imagestore"
	"github.com/tenon-dev/tenon/internal/sandbox"
)

// readyTimeout bounds the wait for a new sandbox's executor to report ready.
const readyTimeout = 10 * time.Second

// diskDir is the mount point of a sandbox's disk image (Config.DiskMax) in
// its directory; the rootfs and the backend's workspace lie in it.
const diskDir = "fs"

// Create starts a sandbox and returns once its executor is ready.
func (b *Backend) Create(ctx context.Context, spec sandbox.Spec) (info sandbox.Info, err error) {
	if err := sandbox.ValidateID(spec.ID); err != nil {
		return sandbox.Info{}, err
	}
	if !isHostImage(spec.Image) && b.cfg.Images == nil {
		return sandbox.Info{}, fmt.Errorf("sandbox %s: image %q (this process backend has no image store, only \"host\"): %w",
			spec.ID, spec.Image, sandbox.ErrUnsupportedImage)
	}
	if spec.RootfsFrom != "" && !filepath.IsAbs(spec.RootfsFrom) {
		return sandbox.Info{}, fmt.Errorf("sandbox %s: rootfs-from %q is not an absolute path: %w", spec.ID, spec.RootfsFrom, sandbox.ErrInvalidSpec)
	}
	if spec.Workspace != "" && !filepath.IsAbs(spec.Workspace) {
		return sandbox.Info{}, fmt.Errorf("sandbox %s: workspace %q is not an absolute path: %w", spec.ID, spec.Workspace, sandbox.ErrInvalidSpec)
	}
	if err := sandbox.ValidateBinds(spec.Binds); err != nil {
		return sandbox.Info{}, fmt.Errorf("sandbox %s: %w", spec.ID, err)
	}
	spec.Binds = slices.Clone(spec.Binds)
	spec.Labels = maps.Clone(spec.Labels)
	spec.Env = slices.Clone(spec.Env)
	if !validEnv(spec.Env) {
		return sandbox.Info{}, fmt.Errorf("sandbox %s: environment entries must be KEY=VALUE: %w", spec.ID, sandbox.ErrInvalidSpec)
	}
	if err := b.reserve(spec.ID); err != nil {
		return sandbox.Info{}, err
	}
	var im *imagestore.Image
	if !isHostImage(spec.Image) {
		// Held until the sandbox is destroyed: the image cannot be
		// removed under it.
		got, err := b.cfg.Images.Hold(holdKey(spec.ID), spec.Image)
		if err != nil {
			b.mu.Lock()
			delete(b.creating, spec.ID)
			b.mu.Unlock()
			return sandbox.Info{}, fmt.Errorf("sandbox %s: %w: %w", spec.ID, sandbox.ErrUnsupportedImage, err)
		}
		im = &got
	}
	bx, err := b.start(ctx, spec, im)
	b.mu.Lock()
	delete(b.creating, spec.ID)
	closed := b.closed
	if err == nil && !closed {
		b.boxes[spec.ID] = bx
	}
	b.mu.Unlock()
	if err != nil {
		return sandbox.Info{}, fmt.Errorf("creating sandbox %s: %w", spec.ID, err)
	}
	if closed {
		_ = bx.destroy(ctx)
		return sandbox.Info{}, sandbox.ErrClosed
	}
	b.log.Debug("sandbox created", "id", spec.ID, "pid", bx.initPid, "cgroup", bx.cgroupPath)
	return b.Info(ctx, spec.ID)
}

func (b *Backend) reserve(id string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return sandbox.ErrClosed
	}
	if _, ok := b.boxes[id]; ok || b.creating[id] {
		return fmt.Errorf("sandbox %s: %w", id, sandbox.ErrExists)
	}
	b.creating[id] = true
	return nil
}

// start builds the rootfs, starts the container and waits for the executor.
// On failure it removes everything it made.
func (b *Backend) start(ctx context.Context, spec sandbox.Spec, im *imagestore.Image) (_ *box, retErr error) {
	dir := filepath.Join(b.sandboxesDir(), spec.ID)
	bx := &box{
		id:         spec.ID,
		spec:       spec,
		dir:        dir,
		rootfs:     filepath.Join(dir, "rootfs"),
		workspace:  spec.Workspace,
		cgroupPath: b.cfg.CgroupParent + "/" + spec.ID,
		layout:     b.cfg.Layout,
		mountinfo:  b.mountinfo(),
		procRoot:   b.procRoot(),
		log:        b.log.With("sandbox", spec.ID),
		dead:       make(chan struct{}),
		results:    make(chan response, 1),
		hibernates: b.cfg.IdleLoop && idleLoop,
	}
	if im != nil {
		bx.release = func() {
			if err := b.cfg.Images.Release(holdKey(spec.ID)); err != nil {
				b.log.Warn("releasing the sandbox's image", "sandbox", spec.ID, "err", err)
			}
		}
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		if bx.release != nil {
			bx.release()
		}
		if errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("stale state %s (remove it): %w", dir, sandbox.ErrExists)
		}
		return nil, err
	}
	defer func() {
		if retErr != nil {
			if err := bx.destroy(context.WithoutCancel(ctx)); err != nil {
				b.log.Warn("cleaning up a failed sandbox", "id", spec.ID, "err", err)
			}
		}
	}()
	if b.cfg.DiskMax > 0 {
		top := filepath.Join(dir, diskDir)
		if err := disk.Mount(filepath.Join(dir, "disk.img"), top, b.cfg.DiskMax); err != nil {
			return nil, fmt.Errorf("limiting the sandbox's disk: %w", err)
		}
		bx.disk = top
		bx.rootfs = filepath.Join(top, "rootfs")
	}
	if bx.workspace == "" {
		bx.workspace = filepath.Join(filepath.Dir(bx.rootfs), "workspace")
		bx.ownWorkspace = true
	}
	if err := os.MkdirAll(bx.workspace, 0o755); err != nil {
		return nil, fmt.Errorf("creating workspace: %w", err)
	}
	ws, err := filepath.EvalSymlinks(bx.workspace)
	if err != nil {
		return nil, fmt.Errorf("resolving workspace: %w", err)
	}
	binds, err := resolveBinds(spec.Binds)
	if err != nil {
		return nil, err
	}
	bx.layer = bx.rootfs
	switch {
	case im != nil:
		parent := filepath.Dir(bx.rootfs)
		ir := &imageRoot{image: *im, upper: bx.rootfs, work: filepath.Join(parent, "work"), merged: filepath.Join(parent, "merged")}
		if err := mountImageRoot(ir, b.cfg.Images.LowerDirs(*im), spec.RootfsFrom, spec.Env); err != nil {
			return nil, err
		}
		bx.image, bx.rootfs = ir, ir.merged
		if err := chownWorkspace(ws, ir.cred); err != nil {
			return nil, err
		}
	case spec.RootfsFrom != "":
		err = adoptRootfs(spec.RootfsFrom, bx.rootfs, b.system)
	default:
		err = makeRootfs(bx.rootfs, b.system)
	}
	if err != nil {
		return nil, err
	}
	hosts := filepath.Join(dir, "hosts")
	if err := writeHosts(hosts, spec.ID); err != nil {
		return nil, fmt.Errorf("writing /etc/hosts: %w", err)
	}
	cs := containerSpec{
		id: spec.ID, rootfs: bx.rootfs, workspace: ws, exe: b.cfg.Executable,
		localBin: b.binDir(), cgroupPath: bx.cgroupPath, network: spec.Network, system: b.system,
		etc: b.etcDir(), etcBinds: b.etcBinds, hosts: hosts, binds: binds,
	}
	if spec.Network {
		cs.resolvConf = hostResolvConf(b.cfg.HostRoot)
	}
	env := executorEnv(mergeEnv(defaultEnv, spec.Env))
	argv := execArgv(exeMount)
	if bx.image != nil {
		cs.image, cs.rt, cs.rtDir = true, b.runtime, b.rtDir()
		env, argv = executorEnv(defaultEnv), b.runtime.initArgv()
	}
	config := containerConfig(cs)
	c, err := libcontainer.Create(b.containersDir(), spec.ID, config)
	if err != nil {
		return nil, fmt.Errorf("creating container: %w", err)
	}
	bx.container = c

	hostEnd, initEnd, err := channelPair()
	if err != nil {
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		hostEnd.Close()
		initEnd.Close()
		return nil, err
	}
	bx.conn = hostEnd
	bx.enc = json.NewEncoder(hostEnd)
	// The executor's stdin is /dev/null and its stdout and stderr go to
	// the log: the requests and results travel on the socket (fd
	// channelFd), never on a standard stream.
	p := &libcontainer.Process{
		Args:       argv,
		Env:        env,
		Cwd:        "/",
		Stdout:     errW,
		Stderr:     errW,
		ExtraFiles: []*os.File{initEnd},
		Init:       true,
	}
	err = c.Run(p)
	initEnd.Close()
	errW.Close()
	go bx.logStderr(errR)
	if err != nil {
		return nil, fmt.Errorf("starting container: %w", err)
	}
	bx.proc = p
	if bx.initPid, err = p.Pid(); err != nil {
		return nil, err
	}
	go bx.watch()
	go bx.readResults()
	if bx.group, err = cgroup.Open(b.cfg.Layout, bx.cgroupPath); err != nil {
		return nil, err
	}
	// Only init runs yet: the cap holds before the first action.
	if err := bx.group.SetPidsLimit(b.cfg.PidsMax); err != nil {
		return nil, fmt.Errorf("capping processes: %w", err)
	}
	if b.cfg.OOMGroup {
		if err := bx.group.SetOOMGroup(true); err != nil {
			return nil, fmt.Errorf("making an OOM kill take the whole sandbox: %w", err)
		}
		bx.oomGroup = true
	}
	if b.cfg.NoSwap {
		if err := bx.group.SetSwap(false); err != nil {
			return nil, fmt.Errorf("keeping the sandbox out of swap: %w", err)
		}
	}

	t := time.NewTimer(readyTimeout)
	defer t.Stop()
	select {
	case r := <-bx.results:
		if r.Op != opReady {
			return nil, fmt.Errorf("executor sent %q before ready", r.Op)
		}
	case <-bx.dead:
		return nil, fmt.Errorf("sandbox init exited during start: %w", sandbox.ErrSandboxDead)
	case <-t.C:
		return nil, fmt.Errorf("sandbox init not ready after %s", readyTimeout)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	// The agent's first model wait follows: the executor makes way.
	bx.hibernate()
	return bx, nil
}

// resolveBinds resolves the sources of Spec.Binds, each of which must be
// an existing directory; libcontainer resolves the targets inside the rootfs.
func resolveBinds(binds []sandbox.Bind) ([]sandbox.Bind, error) {
	out := make([]sandbox.Bind, len(binds))
	for i, bd := range binds {
		src, err := filepath.EvalSymlinks(bd.Source)
		if err != nil {
			return nil, fmt.Errorf("bind source: %w", err)
		}
		if fi, err := os.Stat(src); err != nil {
			return nil, fmt.Errorf("bind source: %w", err)
		} else if !fi.IsDir() {
			return nil, fmt.Errorf("bind source %s is not a directory: %w", bd.Source, sandbox.ErrInvalidSpec)
		}
		out[i] = sandbox.Bind{Source: src, Target: bd.Target, ReadOnly: bd.ReadOnly}
	}
	return out, nil
}

// logStderr forwards the executor's stderr to the log.
func (bx *box) logStderr(r io.ReadCloser) {
	defer r.Close()
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		bx.log.Warn("sandbox init", "line", sc.Text())
	}
}

// channelPair makes the socket pair between the host and a sandbox's
// executor. The host's end is non-blocking (so closing it ends a pending
// read); the init's end is blocking, passed to init as its fd channelFd.
func channelPair() (host, init *os.File, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("executor channel: %w", err)
	}
	if err := unix.SetNonblock(fds[0], true); err != nil {
		unix.Close(fds[0])
		unix.Close(fds[1])
		return nil, nil, fmt.Errorf("executor channel: %w", err)
	}
	return os.NewFile(uintptr(fds[0]), "tenon-channel"), os.NewFile(uintptr(fds[1]), "tenon-channel-init"), nil
}
