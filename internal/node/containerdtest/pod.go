package containerdtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	cri "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// PodConfig is a host-network pod (no CNI needed; such pods need an
// empty hostname), its logs kept under d.Dir, named name in namespace "default" with uid uid, its
// cgroups under cgroupParent (cgroupfs driver, e.g. "/kubepods/pod<uid>").
func (d *Daemon) PodConfig(name, uid, cgroupParent string, annotations map[string]string) *cri.PodSandboxConfig {
	return &cri.PodSandboxConfig{
		Metadata:     &cri.PodSandboxMetadata{Name: name, Namespace: "default", Uid: uid},
		Annotations:  annotations,
		LogDirectory: filepath.Join(d.Dir, "logs", name),
		Linux: &cri.LinuxPodSandboxConfig{
			CgroupParent: cgroupParent,
			SecurityContext: &cri.LinuxSandboxSecurityContext{
				NamespaceOptions: &cri.NamespaceOption{Network: cri.NamespaceMode_NODE},
			},
		},
	}
}

// RunPod runs a pod sandbox and returns its id.
func (d *Daemon) RunPod(ctx context.Context, t *testing.T, cfg *cri.PodSandboxConfig) string {
	t.Helper()
	r, err := d.Runtime.RunPodSandbox(ctx, &cri.RunPodSandboxRequest{Config: cfg})
	if err != nil {
		t.Fatalf("RunPodSandbox %s: %v\n%s", cfg.Metadata.Name, err, d.Log())
	}
	return r.PodSandboxId
}

// Container is one container to run in a pod.
type Container struct {
	Name, Image string
	Command     []string
	Env         map[string]string
	// MemoryLimit is the container's own limit (limits.memory), 0: none.
	MemoryLimit int64
	// Mounts show host paths read-only in the container (host -> container).
	Mounts map[string]string
}

// RunContainer creates and starts c in pod and returns its id.
func (d *Daemon) RunContainer(ctx context.Context, t *testing.T, pod string, podCfg *cri.PodSandboxConfig, c Container) string {
	t.Helper()
	id, err := d.StartContainer(ctx, pod, podCfg, c)
	if err != nil {
		t.Fatalf("%v\n%s", err, d.Log())
	}
	return id
}

// StartContainer is RunContainer returning its error, for goroutines
// other than the test's.
func (d *Daemon) StartContainer(ctx context.Context, pod string, podCfg *cri.PodSandboxConfig, c Container) (string, error) {
	cfg := &cri.ContainerConfig{
		Metadata: &cri.ContainerMetadata{Name: c.Name},
		Image:    &cri.ImageSpec{Image: c.Image},
		Command:  c.Command,
		LogPath:  c.Name + ".log",
		Linux:    &cri.LinuxContainerConfig{Resources: &cri.LinuxContainerResources{MemoryLimitInBytes: c.MemoryLimit}},
	}
	for k, v := range c.Env {
		cfg.Envs = append(cfg.Envs, &cri.KeyValue{Key: k, Value: []byte(v)})
	}
	for host, ctr := range c.Mounts {
		cfg.Mounts = append(cfg.Mounts, &cri.Mount{HostPath: host, ContainerPath: ctr, Readonly: true})
	}
	r, err := d.Runtime.CreateContainer(ctx, &cri.CreateContainerRequest{PodSandboxId: pod, Config: cfg, SandboxConfig: podCfg})
	if err != nil {
		return "", fmt.Errorf("CreateContainer %s: %w", c.Name, err)
	}
	if _, err := d.Runtime.StartContainer(ctx, &cri.StartContainerRequest{ContainerId: r.ContainerId}); err != nil {
		return "", fmt.Errorf("StartContainer %s: %w", c.Name, err)
	}
	return r.ContainerId, nil
}

// ContainerLog is what container name of pod wrote so far (CRI log format).
func (d *Daemon) ContainerLog(pod, name string) string {
	b, _ := os.ReadFile(filepath.Join(d.Dir, "logs", pod, name+".log"))
	return string(b)
}
