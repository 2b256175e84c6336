package docker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/client"

	"github.com/tenon-dev/tenon/internal/cgroup"
	"github.com/tenon-dev/tenon/internal/image"
	"github.com/tenon-dev/tenon/internal/sandbox"
)

// initCmd is every container's init (under docker-init, which reaps orphans).
var initCmd = []string{"sleep", "infinity"}

// initTasks is the number of tasks a fresh container holds: docker-init and initCmd.
const initTasks = 2

// Create creates and starts a container for spec.
func (b *Backend) Create(ctx context.Context, spec sandbox.Spec) (sandbox.Info, error) {
	if err := validateSpec(spec); err != nil {
		return sandbox.Info{}, err
	}
	if err := b.reserve(spec.ID); err != nil {
		return sandbox.Info{}, err
	}
	bx, err := b.create(ctx, spec)
	b.mu.Lock()
	defer b.mu.Unlock()
	if err != nil || b.closed {
		delete(b.boxes, spec.ID)
		if err == nil {
			_ = b.remove(context.WithoutCancel(ctx), bx)
			err = sandbox.ErrClosed
		}
		return sandbox.Info{}, fmt.Errorf("creating sandbox %s: %w", spec.ID, err)
	}
	b.boxes[spec.ID] = bx
	return bx.info(false), nil
}

func validateSpec(spec sandbox.Spec) error {
	if err := sandbox.ValidateID(spec.ID); err != nil {
		return err
	}
	if spec.Workspace != "" && !filepath.IsAbs(spec.Workspace) {
		return fmt.Errorf("workspace %q must be an absolute path: %w", spec.Workspace, sandbox.ErrInvalidSpec)
	}
	if spec.RootfsFrom != "" && !filepath.IsAbs(spec.RootfsFrom) {
		return fmt.Errorf("rootfs-from %q must be an absolute path: %w", spec.RootfsFrom, sandbox.ErrInvalidSpec)
	}
	if err := sandbox.ValidateBinds(spec.Binds); err != nil {
		return err
	}
	for _, e := range spec.Env {
		if k, _, ok := strings.Cut(e, "="); !ok || k == "" {
			return fmt.Errorf("environment entry %q must be KEY=VALUE: %w", e, sandbox.ErrInvalidSpec)
		}
	}
	return nil
}

// capAdd is sandbox.Capabilities as the engine takes them: without the
// CAP_ prefix, which engines before 20.10 would double.
func capAdd() []string {
	caps := sandbox.Capabilities()
	for i, c := range caps {
		caps[i] = strings.TrimPrefix(c, "CAP_")
	}
	return caps
}

// reserve claims id for a Create in progress.
func (b *Backend) reserve(id string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return sandbox.ErrClosed
	}
	if _, ok := b.boxes[id]; ok {
		return fmt.Errorf("sandbox %s: %w", id, sandbox.ErrExists)
	}
	b.boxes[id] = nil
	return nil
}

// mounts lists the container's bind mounts.
func (b *Backend) mounts(spec sandbox.Spec, base bool) []mount.Mount {
	var ms []mount.Mount
	if spec.Workspace != "" {
		ms = append(ms, mount.Mount{Type: mount.TypeBind, Source: spec.Workspace, Target: sandbox.WorkspaceMount})
	}
	for _, bd := range spec.Binds {
		ms = append(ms, mount.Mount{Type: mount.TypeBind, Source: bd.Source, Target: bd.Target, ReadOnly: bd.ReadOnly})
	}
	if base && b.baseDir != "" {
		for _, d := range []string{"/usr", "/etc"} {
			ms = append(ms, mount.Mount{Type: mount.TypeBind, Source: filepath.Join(b.baseDir, d), Target: d, ReadOnly: true})
		}
	}
	if b.initBinary != "" {
		ms = append(ms, mount.Mount{Type: mount.TypeBind, Source: b.initBinary, Target: InitPath, ReadOnly: true})
	}
	if b.cfg.TenonBinary != "" {
		ms = append(ms, mount.Mount{Type: mount.TypeBind, Source: b.cfg.TenonBinary, Target: image.TenonPath, ReadOnly: true})
	}
	return ms
}

// CheckImage returns nil when the backend can start a sandbox from img
// ("" and "host" are the base image; an image the engine lacks is loaded
// from Config.Images now), else an error wrapping
// sandbox.ErrUnsupportedImage that names it: the daemon refuses such an
// agent at creation rather than at its first action.
func (b *Backend) CheckImage(ctx context.Context, img string) error {
	if img == "" || img == "host" || img == b.cfg.Image {
		return nil
	}
	return b.ensureImage(ctx, img)
}

// ensureImage makes sure the engine has img, loading it from Config.Images
// when it lacks it.
func (b *Backend) ensureImage(ctx context.Context, img string) error {
	if _, err := b.cli.ImageInspect(ctx, img); client.IsErrNotFound(err) {
		if lerr := b.loadImported(ctx, img); lerr != nil {
			return fmt.Errorf("image %s: %w: %w", img, sandbox.ErrUnsupportedImage, lerr)
		}
	} else if err != nil {
		return daemonErr(b.cli, err)
	}
	return nil
}

func (b *Backend) create(ctx context.Context, spec sandbox.Spec) (*box, error) {
	img, base := spec.Image, true
	if img == "" || img == "host" || img == b.cfg.Image {
		img = b.baseImage
	} else {
		base = false
		if err := b.ensureImage(ctx, img); err != nil {
			return nil, err
		}
	}
	if spec.Workspace != "" {
		if err := os.MkdirAll(spec.Workspace, 0o755); err != nil {
			return nil, fmt.Errorf("creating workspace: %w", err)
		}
	}
	labels := map[string]string{LabelSandbox: "1", LabelDomain: b.cfg.Domain, LabelID: spec.ID}
	for k, v := range spec.Labels {
		labels[labelUser+k] = v
	}
	netMode := container.NetworkMode("none")
	if spec.Network {
		netMode = "host"
	}
	init := b.initBinary == ""
	var entrypoint []string
	if !init {
		entrypoint = []string{InitPath, "--"}
	}
	res := container.Resources{CgroupParent: b.cgroupParent()}
	if b.cfg.PidsMax > 0 {
		res.PidsLimit = &b.cfg.PidsMax
	}
	start := b.cfg.Clock.Now()
	resp, err := b.cli.ContainerCreate(ctx,
		&container.Config{
			Image:      img,
			Entrypoint: entrypoint,
			Cmd:        initCmd,
			Env:        spec.Env,
			WorkingDir: sandbox.WorkspaceMount,
			Labels:     labels,
		},
		&container.HostConfig{
			Resources:   res,
			NetworkMode: netMode,
			Init:        &init,
			Mounts:      b.mounts(spec, base),
			// The same capabilities as the process backend's sandboxes,
			// and no gaining more through setuid or file-capability
			// binaries (the image's or the sandbox's own).
			CapDrop:     []string{"ALL"},
			CapAdd:      capAdd(),
			SecurityOpt: []string{"no-new-privileges"},
		}, nil, nil, b.cfg.NamePrefix+spec.ID)
	if cerrdefs.IsConflict(err) {
		return nil, fmt.Errorf("container %s%s exists (a stale one? see RemoveStale): %w", b.cfg.NamePrefix, spec.ID, sandbox.ErrExists)
	} else if err != nil {
		return nil, daemonErr(b.cli, fmt.Errorf("creating container: %w", err))
	}
	bx := &box{id: spec.ID, cid: resp.ID, spec: spec}
	if spec.RootfsFrom != "" {
		if err := b.adoptLayer(ctx, resp.ID, spec.RootfsFrom); err != nil {
			_ = b.remove(context.WithoutCancel(ctx), bx)
			return nil, err
		}
	}
	if err := b.start(ctx, bx); err != nil {
		_ = b.remove(context.WithoutCancel(ctx), bx)
		return nil, err
	}
	b.cfg.Log.Debug("sandbox created", "id", spec.ID, "container", resp.ID[:12], "duration", b.cfg.Clock.Now().Sub(start))
	return bx, nil
}

// start starts the container and finds its cgroup and init tasks.
func (b *Backend) start(ctx context.Context, bx *box) error {
	if err := b.cli.ContainerStart(ctx, bx.cid, container.StartOptions{}); err != nil {
		return daemonErr(b.cli, fmt.Errorf("starting container: %w", err))
	}
	in, err := b.cli.ContainerInspect(ctx, bx.cid)
	if err != nil {
		return daemonErr(b.cli, fmt.Errorf("inspecting container: %w", err))
	}
	if in.State == nil || !in.State.Running || in.State.Pid <= 0 {
		return fmt.Errorf("container %s is not running after start: %w", bx.cid[:12], sandbox.ErrSandboxDead)
	}
	bx.initPid = in.State.Pid
	if in.GraphDriver.Name == overlay2 {
		bx.upper = in.GraphDriver.Data["UpperDir"]
	}
	bx.cgroupPath = path.Join(strings.Trim(b.cfg.Domain, "/"), bx.cid)
	if bx.cg, err = cgroup.Open(b.layout, bx.cgroupPath); err != nil {
		return fmt.Errorf("opening the container's cgroup (is dockerd using the cgroupfs driver?): %w", err)
	}
	// The init tasks are docker-init and its child; wait for the child to appear.
	deadline := time.Now().Add(2 * time.Second)
	for {
		pids, err := bx.cg.Pids()
		if err != nil {
			return fmt.Errorf("listing init tasks: %w", err)
		}
		if len(pids) >= initTasks || time.Now().After(deadline) {
			bx.keep = map[int]bool{bx.initPid: true}
			for _, p := range pids {
				bx.keep[p] = true
			}
			if len(pids) == 0 {
				return errors.New("container cgroup holds no tasks after start")
			}
			return nil
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func (bx *box) info(paused bool) sandbox.Info {
	return sandbox.Info{ID: bx.id, CgroupPath: bx.cgroupPath, InitPid: bx.initPid, Labels: bx.spec.Labels, Paused: paused}
}
