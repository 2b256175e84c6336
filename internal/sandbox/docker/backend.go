package docker

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/docker/docker/client"

	"github.com/tenon-dev/tenon/internal/cgroup"
	"github.com/tenon-dev/tenon/internal/image"
	"github.com/tenon-dev/tenon/internal/sandbox"
)

// Backend runs sandboxes as Docker containers.
type Backend struct {
	cfg    Config
	cli    APIClient
	layout *cgroup.Layout
	// baseDir is the base image's layer directory on the host (overlay2
	// UpperDir), whose usr and etc are bind-mounted read-only; "" when the
	// storage driver does not expose it.
	baseDir string
	// baseImage is the id the base image's name resolved to at New: every
	// base sandbox uses that id, so a rebuilt image never mismatches baseDir.
	baseImage string
	// initBinary is the host init mounted at InitPath; "" uses the engine's --init.
	initBinary string
	// driver is the engine's storage driver (overlay2 exposes layers as directories).
	driver string
	// loadMu serializes loads of imported images (imported.go).
	loadMu sync.Mutex

	mu     sync.Mutex
	boxes  map[string]*box // live sandboxes by id; nil value while being created
	closed bool
}

var _ sandbox.Backend = (*Backend)(nil)

// box is one live sandbox.
type box struct {
	id, cid    string
	spec       sandbox.Spec
	initPid    int
	keep       map[int]bool // init tasks a timeout kill spares
	cgroupPath string
	cg         cgroup.Group
	upper      string // the writable layer's host directory; "" unless overlay2
}

// NewClient returns a client for the daemon named by the environment
// (DOCKER_HOST; unix:///var/run/docker.sock by default) that negotiates the
// API version with it.
func NewClient() (*client.Client, error) {
	return client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
}

// Ping checks that dockerd answers; the error names the socket and how to
// start the daemon.
func Ping(ctx context.Context, cli APIClient) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := cli.Ping(ctx); err != nil {
		return &DaemonError{Host: cli.DaemonHost(), Err: err}
	}
	return nil
}

// New connects to dockerd and checks that the base image exists.
func New(ctx context.Context, cfg Config) (*Backend, error) {
	cfg = cfg.withDefaults()
	cli := cfg.Client
	if cli == nil {
		c, err := NewClient()
		if err != nil {
			return nil, fmt.Errorf("docker client: %w", err)
		}
		cli = c
	}
	if err := Ping(ctx, cli); err != nil {
		return nil, err
	}
	inspect, err := cli.ImageInspect(ctx, cfg.Image)
	if client.IsErrNotFound(err) {
		return nil, &image.NotFoundError{Name: cfg.Image}
	} else if err != nil {
		return nil, daemonErr(cli, fmt.Errorf("inspecting image %s: %w", cfg.Image, err))
	}
	layout := cfg.Layout
	if layout == nil {
		if layout, err = cgroup.Detect(cfg.ProcRoot); err != nil {
			return nil, fmt.Errorf("detecting cgroups: %w", err)
		}
	}
	b := &Backend{cfg: cfg, cli: cli, layout: layout, boxes: map[string]*box{}, baseImage: inspect.ID, driver: inspect.GraphDriver.Name}
	b.initBinary = findInit(cfg.InitBinary)
	switch {
	case b.initBinary == "":
		cfg.Log.Warn("no docker-init or tini on PATH: using the engine's --init; /usr and /etc stay writable in sandboxes")
	case inspect.GraphDriver.Name == overlay2 && inspect.GraphDriver.Data["UpperDir"] != "" && len(inspect.RootFS.Layers) == 1:
		b.baseDir = inspect.GraphDriver.Data["UpperDir"]
	default:
		cfg.Log.Warn("base image layer not reachable: /usr and /etc stay writable in sandboxes",
			"image", cfg.Image, "driver", inspect.GraphDriver.Name, "layers", len(inspect.RootFS.Layers))
	}
	return b, nil
}

// InitPath is where the init binary is mounted in every container: outside
// /usr, which is read-only.
const InitPath = "/.tenon-init"

// findInit returns the init binary to mount, links resolved; "" when none.
func findInit(configured string) string {
	names := []string{"docker-init", "tini-static", "tini"}
	if configured != "" {
		names = []string{configured}
	}
	for _, n := range names {
		p, err := exec.LookPath(n)
		if err != nil {
			continue
		}
		if p, err = filepath.EvalSymlinks(p); err == nil {
			return p
		}
	}
	return ""
}

// daemonErr turns a connection failure into a DaemonError.
func daemonErr(cli APIClient, err error) error {
	if client.IsErrConnectionFailed(err) {
		return &DaemonError{Host: cli.DaemonHost(), Err: err}
	}
	return err
}

// Name returns "docker".
func (b *Backend) Name() string { return "docker" }

// Client returns the engine client the backend uses.
func (b *Backend) Client() APIClient { return b.cli }

// Domain returns the cgroup path containers are created under.
func (b *Backend) Domain() string { return b.cfg.Domain }

// cgroupParent is HostConfig.CgroupParent for the cgroupfs driver: an absolute path.
func (b *Backend) cgroupParent() string {
	return "/" + strings.Trim(filepath.ToSlash(b.cfg.Domain), "/")
}

// lookup returns the live sandbox id.
func (b *Backend) lookup(id string) (*box, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, sandbox.ErrClosed
	}
	bx := b.boxes[id]
	if bx == nil {
		return nil, fmt.Errorf("sandbox %s: %w", id, sandbox.ErrNotFound)
	}
	return bx, nil
}

// Close destroys every sandbox the backend created and removes the
// domain's directories runc created in the cgroup hierarchies tenon does
// not manage (the domain's owner removes the others). It does not close the
// client.
func (b *Backend) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	boxes := make([]*box, 0, len(b.boxes))
	for _, bx := range b.boxes {
		if bx != nil {
			boxes = append(boxes, bx)
		}
	}
	clear(b.boxes)
	b.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var errs []error
	for _, bx := range boxes {
		if err := b.remove(ctx, bx); err != nil {
			errs = append(errs, err)
		}
	}
	if err := b.removeForeignDirs(b.cfg.CgroupRoot); err != nil {
		errs = append(errs, fmt.Errorf("removing the domain's cgroups in hierarchies tenon does not manage: %w", err))
	}
	return errors.Join(errs...)
}
