package node

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/containerd/nri/pkg/api"
	"github.com/containerd/nri/pkg/stub"
)

// DefaultNRISocket is containerd's and CRI-O's default NRI socket.
const DefaultNRISocket = "/var/run/nri/nri.sock"

// plugin is the NRI plugin: the runtime's requests and events, mapped to
// the Node's calls.
type plugin struct{ n *Node }

var (
	_ stub.ConfigureInterface       = plugin{}
	_ stub.SynchronizeInterface     = plugin{}
	_ stub.CreateContainerInterface = plugin{}
	_ stub.StartContainerInterface  = plugin{}
	_ stub.StopContainerInterface   = plugin{}
	_ stub.RemoveContainerInterface = plugin{}
)

func podRef(p *api.PodSandbox) PodRef {
	return PodRef{Namespace: p.GetNamespace(), Name: p.GetName(), UID: p.GetUid()}
}

func (p plugin) Configure(_ context.Context, _, runtime, version string) (api.EventMask, error) {
	p.n.log.Info("node: connected to the runtime's NRI", "runtime", runtime, "version", version)
	return 0, nil // subscribe to what the plugin implements
}

// Synchronize re-adopts the running containers whose cgroups are under the
// domain (a restart of tenon node, or of the runtime).
func (p plugin) Synchronize(_ context.Context, pods []*api.PodSandbox, ctrs []*api.Container) ([]*api.ContainerUpdate, error) {
	byID := make(map[string]*api.PodSandbox, len(pods))
	for _, pod := range pods {
		byID[pod.GetId()] = pod
	}
	for _, c := range ctrs {
		pod := byID[c.GetPodSandboxId()]
		if pod == nil || c.GetState() != api.ContainerState_CONTAINER_RUNNING || !IsAgent(pod.GetAnnotations()) {
			continue
		}
		if err := p.n.Start(podRef(pod), c.GetName(), c.GetId(), c.GetLinux().GetCgroupsPath()); err != nil {
			p.n.log.Warn("node: re-adopting a container", "err", err)
		}
	}
	return nil, nil
}

// CreateContainer moves an agent pod's container under the domain.
func (p plugin) CreateContainer(_ context.Context, pod *api.PodSandbox, c *api.Container) (*api.ContainerAdjustment, []*api.ContainerUpdate, error) {
	path, ok := p.n.Create(podRef(pod), pod.GetAnnotations(), c.GetId())
	if !ok {
		return nil, nil, nil
	}
	adj := &api.ContainerAdjustment{}
	adj.SetLinuxCgroupsPath(path)
	return adj, nil, nil
}

// StartContainer adopts it: its cgroup exists from here on.
func (p plugin) StartContainer(_ context.Context, pod *api.PodSandbox, c *api.Container) error {
	if err := p.n.Start(podRef(pod), c.GetName(), c.GetId(), c.GetLinux().GetCgroupsPath()); err != nil {
		p.n.log.Warn("node: adopting a container", "err", err)
	}
	return nil // never fail the pod for tenon's sake
}

func (p plugin) StopContainer(ctx context.Context, _ *api.PodSandbox, c *api.Container) ([]*api.ContainerUpdate, error) {
	if err := p.n.Stop(ctx, c.GetId(), "stopped by the runtime"); err != nil {
		p.n.log.Warn("node: releasing a container", "err", err)
	}
	return nil, nil
}

func (p plugin) RemoveContainer(ctx context.Context, _ *api.PodSandbox, c *api.Container) error {
	if err := p.n.Stop(ctx, c.GetId(), "removed by the runtime"); err != nil {
		p.n.log.Warn("node: releasing a container", "err", err)
	}
	return nil
}

// RunNRI connects to the runtime's NRI socket as plugin "tenon" and serves
// its requests until ctx is done, reconnecting (every retry) when the
// runtime restarts or is not up yet. connected, when set, is called with
// true at every connection and with false when it ends.
func (n *Node) RunNRI(ctx context.Context, socket string, retry time.Duration, connected func(bool)) error {
	for {
		err := n.runNRIOnce(ctx, socket, connected)
		if ctx.Err() != nil {
			return nil
		}
		n.log.Warn("node: NRI connection ended; retrying", "socket", socket, "err", err, "in", retry)
		select {
		case <-ctx.Done():
			return nil
		case <-n.cfg.Clock.After(retry):
		}
	}
}

func (n *Node) runNRIOnce(ctx context.Context, socket string, connected func(bool)) error {
	closed := make(chan struct{})
	s, err := stub.New(plugin{n}, stub.WithPluginName("tenon"), stub.WithPluginIdx("50"),
		stub.WithSocketPath(socket), stub.WithOnClose(func() { close(closed) }))
	if err != nil {
		return fmt.Errorf("creating the NRI plugin: %w", err)
	}
	if err := s.Start(ctx); err != nil {
		return fmt.Errorf("connecting to NRI at %s (is NRI enabled in the runtime's config?): %w", socket, err)
	}
	if connected != nil {
		connected(true)
		defer connected(false)
	}
	select {
	case <-ctx.Done():
		s.Stop()
		return nil
	case <-closed:
		s.Stop()
		return errors.New("the runtime closed the connection")
	}
}
