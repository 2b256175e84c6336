package docker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	dimage "github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"

	"github.com/tenon-dev/tenon/internal/cgroup"
	"github.com/tenon-dev/tenon/internal/image"
)

// Live tests build their own image and domains, named after the package and pid.
var (
	testImage  = fmt.Sprintf("tenon-test-docker-%d:latest", os.Getpid())
	buildOnce  sync.Once
	buildErr   error
	builtImage bool
	liveCli    *client.Client
)

func TestMain(m *testing.M) {
	code := m.Run()
	if builtImage {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		if _, err := liveCli.ImageRemove(ctx, testImage, dimage.RemoveOptions{Force: true, PruneChildren: true}); err != nil {
			fmt.Fprintf(os.Stderr, "removing test image %s: %v\n", testImage, err)
			code = 1
		}
		cancel()
	}
	os.Exit(code)
}

// live returns a client to a running dockerd with the test image built, or
// skips the test naming what is missing.
func live(t testing.TB) *client.Client {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("docker live tests need root (cgroups, dockerd socket)")
	}
	cli, err := NewClient()
	if err != nil {
		t.Skipf("docker client: %v", err)
	}
	if err := Ping(context.Background(), cli); err != nil {
		t.Skipf("dockerd not reachable: %v", err)
	}
	if _, err := cgroup.Detect("/proc"); err != nil {
		t.Skipf("cgroup hierarchies: %v", err)
	}
	buildOnce.Do(func() {
		liveCli = cli
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		_, buildErr = image.BuildWith(ctx, cli, testImage, image.Config{}, nil)
		builtImage = buildErr == nil
	})
	if errors.Is(buildErr, image.ErrNoPackage) {
		t.Skipf("cannot build the base image on this host: %v", buildErr)
	}
	if buildErr != nil {
		t.Fatalf("building test image: %v", buildErr)
	}
	return cli
}

var domainSeq int

// newDomain opens a workload domain for one test with the given budget and
// removes it (and the groups runc added in other hierarchies) at cleanup.
func newDomain(t testing.TB, budget int64) (*cgroup.Layout, string) {
	t.Helper()
	layout, err := cgroup.Detect("/proc")
	if err != nil {
		t.Skipf("cgroup hierarchies: %v", err)
	}
	domainSeq++
	name := fmt.Sprintf("tenon-test-docker-%d-%d", os.Getpid(), domainSeq)
	d, err := cgroup.OpenDomain(context.Background(), layout, name, budget, nil)
	if err != nil {
		t.Fatalf("opening domain %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := d.Close(ctx); err != nil {
			t.Errorf("closing domain %s: %v", name, err)
		}
		if err := removeGroupDirs("/sys/fs/cgroup", name); err != nil {
			t.Errorf("removing %s from other hierarchies: %v", name, err)
		}
	})
	// Another package's live test may have zram swap on; the budget must
	// end in OOM kills, not in paging (TestOOMUnderDomainLimit).
	if err := d.DisableSwap(); err != nil {
		t.Fatalf("disabling swap in domain %s: %v", name, err)
	}
	return layout, name
}

// removeGroupDirs removes root/<controller>/name (deepest first) in every
// hierarchy: runc creates the parent in hierarchies tenon does not manage.
func removeGroupDirs(root, name string) error {
	hs, err := os.ReadDir(root)
	if err != nil {
		return err
	}
	var errs []error
	for _, h := range hs {
		errs = append(errs, removeDirs(filepath.Join(root, h.Name(), name))...)
	}
	return errors.Join(errs...)
}

// newBackend makes a backend on the test image under a fresh domain; at
// cleanup it closes it and checks that no container of the domain is left.
func newBackend(t testing.TB, budget int64) *Backend {
	t.Helper()
	cli := live(t)
	layout, domain := newDomain(t, budget)
	b, err := New(context.Background(), Config{
		Client: cli, Image: testImage, Domain: domain, Layout: layout,
		NamePrefix: domain + "-", TenonBinary: testBinary(t),
	})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		ids, err := ListSandboxes(context.Background(), cli, domain)
		if err != nil || len(ids) != 0 {
			t.Errorf("containers left in domain %s: %v %v", domain, ids, err)
			_, _ = RemoveStale(context.Background(), cli, domain)
		}
	})
	return b
}

// testBinary is the running test binary, standing in for the tenon binary.
func testBinary(t testing.TB) string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatalf("os.Executable: %v", err)
	}
	return exe
}
