package docker

import (
	"context"
	"io"
	"log/slog"
	"time"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/client"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/tenon-dev/tenon/internal/cgroup"
	"github.com/tenon-dev/tenon/internal/clock"
	"github.com/tenon-dev/tenon/internal/image"
)

// APIClient is the part of the Docker Engine API the backend uses;
// *client.Client implements it.
type APIClient interface {
	image.Client
	DaemonHost() string
	Ping(ctx context.Context) (types.Ping, error)
	ContainerCreate(ctx context.Context, config *container.Config, hostConfig *container.HostConfig, networkingConfig *network.NetworkingConfig, platform *ocispec.Platform, containerName string) (container.CreateResponse, error)
	ContainerStart(ctx context.Context, containerID string, options container.StartOptions) error
	ContainerInspect(ctx context.Context, containerID string) (container.InspectResponse, error)
	ContainerRemove(ctx context.Context, containerID string, options container.RemoveOptions) error
	ContainerList(ctx context.Context, options container.ListOptions) ([]container.Summary, error)
	ContainerPause(ctx context.Context, containerID string) error
	ContainerUnpause(ctx context.Context, containerID string) error
	ContainerExecCreate(ctx context.Context, containerID string, options container.ExecOptions) (container.ExecCreateResponse, error)
	ContainerExecAttach(ctx context.Context, execID string, config container.ExecAttachOptions) (types.HijackedResponse, error)
	ContainerExecInspect(ctx context.Context, execID string) (container.ExecInspect, error)
	ContainerExport(ctx context.Context, containerID string) (io.ReadCloser, error)
	CopyToContainer(ctx context.Context, containerID, dstPath string, content io.Reader, options container.CopyToContainerOptions) error
}

var _ APIClient = (*client.Client)(nil)

// Label keys set on every container the backend creates.
const (
	LabelSandbox = "tenon.sandbox" // always "1"
	LabelDomain  = "tenon.domain"  // the cgroup parent (workload domain)
	LabelID      = "tenon.id"      // the sandbox id
	labelUser    = "tenon.label."  // prefix of Spec.Labels
)

// Config configures a Backend.
type Config struct {
	// Client talks to dockerd; nil means a client from the environment
	// (DOCKER_HOST, default unix:///var/run/docker.sock) with API version negotiation.
	Client APIClient
	// Image is the base image for Spec.Image "" or "host"; image.DefaultName when "".
	Image string
	// Domain is the workload domain's cgroup path relative to the hierarchy
	// roots ("tenon"): containers are created under it. cgroup.DefaultDomain when "".
	Domain string
	// Layout locates the cgroup hierarchies; nil means cgroup.Detect(ProcRoot).
	Layout *cgroup.Layout
	// ProcRoot is /proc, for Detect and process names; "/proc" when "".
	ProcRoot string
	// CgroupRoot holds the cgroup v1 hierarchies (runc creates the domain
	// in each; Close removes it from those Layout does not manage);
	// "/sys/fs/cgroup" when "".
	CgroupRoot string
	// Images, when set, is where Spec.Image names the engine lacks are
	// looked up and loaded from (imported.go); nil leaves them unknown.
	Images ImageSource
	// TenonBinary is bind-mounted read-only at image.TenonPath; "" mounts nothing.
	TenonBinary string
	// InitBinary is a tini-compatible init on the host (docker-init), bind-mounted
	// read-only at InitPath as every container's init; "" means the first of
	// docker-init, tini-static and tini on PATH. Without one the engine's own
	// --init is used, which mounts under /usr, so /usr and /etc stay writable.
	InitBinary string
	// NamePrefix prefixes container names (prefix + sandbox id); "tenon-" when "".
	NamePrefix string
	// FreezeTimeout bounds how long Pause and Resume wait for the cgroup
	// freezer to settle (a failed Pause thaws back); 5 s when 0.
	FreezeTimeout time.Duration
	// SampleInterval is how often memory is read during an action; 20 ms when 0.
	SampleInterval time.Duration
	// PidsMax caps the tasks of each container, its init included (the
	// engine's --pids-limit: pids.max of its cgroup), so a fork bomb
	// fails with EAGAIN instead of filling the host's process table. 0
	// means DefaultPidsMax; < 0 no cap.
	PidsMax int64
	Log     *slog.Logger
	// Clock times actions and their memory samples; clock.Real when nil.
	Clock clock.Clock
}

// DefaultPidsMax is the per-container task cap when Config.PidsMax is 0
// (the process backend's default too).
const DefaultPidsMax = 1024

func (c Config) withDefaults() Config {
	if c.PidsMax == 0 {
		c.PidsMax = DefaultPidsMax
	}
	if c.Image == "" {
		c.Image = image.DefaultName
	}
	if c.Domain == "" {
		c.Domain = cgroup.DefaultDomain
	}
	if c.ProcRoot == "" {
		c.ProcRoot = "/proc"
	}
	if c.CgroupRoot == "" {
		c.CgroupRoot = "/sys/fs/cgroup"
	}
	if c.NamePrefix == "" {
		c.NamePrefix = "tenon-"
	}
	if c.FreezeTimeout <= 0 {
		c.FreezeTimeout = 5 * time.Second
	}
	if c.SampleInterval <= 0 {
		c.SampleInterval = 20 * time.Millisecond
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	if c.Clock == nil {
		c.Clock = clock.Real{}
	}
	return c
}
