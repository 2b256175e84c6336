package api_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	dimage "github.com/docker/docker/api/types/image"

	"github.com/tenon-dev/tenon/internal/cgroup"
	"github.com/tenon-dev/tenon/internal/image"
	"github.com/tenon-dev/tenon/internal/sandbox/docker"
)

// dockerBackend opens a workload domain and a docker backend in it on an
// image built for the test (removed at cleanup), or skips naming what is
// missing: root, a reachable dockerd, a base image this host can build.
func dockerBackend(t *testing.T, budget int64) *docker.Backend {
	t.Helper()
	if testing.Short() {
		t.Skip("live api test skipped in -short mode")
	}
	if os.Geteuid() != 0 {
		t.Skip("live docker test needs root (cgroups, the dockerd socket)")
	}
	cli, err := docker.NewClient()
	if err != nil {
		t.Skipf("docker client: %v", err)
	}
	ctx := context.Background()
	if err := docker.Ping(ctx, cli); err != nil {
		t.Skipf("dockerd not reachable: %v", err)
	}
	layout, err := cgroup.Detect("/proc")
	if err != nil {
		t.Skipf("live docker test needs the cgroup memory controller: %v", err)
	}
	name := fmt.Sprintf("tenon-test-api-docker-%d", os.Getpid())
	bctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	if _, err := image.BuildWith(bctx, cli, name+":latest", image.Config{}, nil); err != nil {
		t.Skipf("cannot build the base image on this host: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := cli.ImageRemove(ctx, name+":latest", dimage.RemoveOptions{Force: true, PruneChildren: true}); err != nil {
			t.Errorf("removing test image: %v", err)
		}
	})
	dom, err := cgroup.OpenDomain(ctx, layout, name, budget, nil)
	if err != nil {
		t.Skipf("live docker test needs a workload domain cgroup: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := dom.Close(ctx); err != nil {
			t.Errorf("closing domain: %v", err)
		}
	})
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	be, err := docker.New(ctx, docker.Config{Client: cli, Image: name + ":latest", Domain: dom.Group().Path(), Layout: layout,
		NamePrefix: name + "-", TenonBinary: self})
	if err != nil {
		t.Fatalf("docker backend: %v", err)
	}
	t.Cleanup(func() {
		if err := be.Close(); err != nil {
			t.Errorf("closing backend: %v", err)
		}
	})
	return be
}

// TestHostileDaemonDocker is TestHostileDaemon (findings 7, 8, 12 and 14)
// on the docker backend.
func TestHostileDaemonDocker(t *testing.T) {
	hostileDaemon(t, dockerBackend(t, 1<<30))
}
