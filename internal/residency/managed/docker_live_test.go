//go:build linux

package managed

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	dimage "github.com/docker/docker/api/types/image"

	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/image"
	"github.com/tenon-dev/tenon/internal/residency"
	"github.com/tenon-dev/tenon/internal/sandbox/docker"
)

// dockerBackend opens a docker backend, wrapped for residency, in e's
// domain on an image it builds; cleanup closes it, checks that no
// container is left and removes the image. It skips without dockerd.
func dockerBackend(tb testing.TB, e *liveEnv) Docker {
	tb.Helper()
	cli, err := docker.NewClient()
	if err != nil {
		tb.Skipf("docker client: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := docker.Ping(ctx, cli); err != nil {
		tb.Skipf("dockerd not reachable: %v", err)
	}
	name := fmt.Sprintf("tenon-test-managed-%d-%d:latest", os.Getpid(), domainSeq.Add(1))
	if _, err := image.BuildWith(ctx, cli, name, image.Config{}, nil); errors.Is(err, image.ErrNoPackage) {
		tb.Skipf("cannot build the base image on this host: %v", err)
	} else if err != nil {
		tb.Fatalf("building %s: %v", name, err)
	}
	tb.Cleanup(func() {
		if _, err := cli.ImageRemove(context.Background(), name, dimage.RemoveOptions{Force: true, PruneChildren: true}); err != nil {
			tb.Errorf("removing image %s: %v", name, err)
		}
	})
	exe, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	domain := e.dom.Group().Path()
	b, err := docker.New(ctx, docker.Config{
		Client: cli, Image: name, Domain: domain, Layout: e.layout, ProcRoot: "/proc",
		NamePrefix: strings.ReplaceAll(domain, "/", "-") + "-", TenonBinary: exe, Log: e.log,
	})
	if err != nil {
		tb.Fatalf("docker.New: %v", err)
	}
	tb.Cleanup(func() {
		if err := b.Close(); err != nil {
			tb.Errorf("closing docker backend: %v", err)
		}
		if ids, err := docker.ListSandboxes(context.Background(), cli, domain); err != nil || len(ids) != 0 {
			tb.Errorf("containers left in %s: %v %v", domain, ids, err)
			_, _ = docker.RemoveStale(context.Background(), cli, domain)
		}
	})
	return WrapDocker(b)
}

// TestLiveDockerTeardownRematerialize: on the docker backend, files outside
// the workspace (the container's writable layer) and in it survive a
// teardown and rematerialization byte for byte, in a new container; a
// sandbox with a background process is refused teardown, naming it.
func TestLiveDockerTeardownRematerialize(t *testing.T) {
	e := newLiveEnv(t)
	b := dockerBackend(t, e)
	n := newNotes()
	var p pressureVar
	m := newManager(t, e, n.host(b, "dk"), &p)
	t.Cleanup(func() { m.Close() })

	a := agent("files", 3)
	act(t, m, b, a, 0, writeFiles)
	want, id1 := act(t, m, b, a, 1, sumFiles)
	if strings.Count(want, "\n") != 7 {
		t.Fatalf("sums: %q", want)
	}
	bg := agent("bg", 2)
	act(t, m, b, bg, 0, "sleep 100 >/dev/null 2>&1 &")

	if err := m.Residency().Teardown(lctx(t), a.ID); err != nil {
		t.Fatalf("Teardown(%s): %v", a.ID, err)
	}
	if alive(b, id1) {
		t.Fatalf("sandbox %s still alive after teardown", id1)
	}
	err := m.Residency().Teardown(lctx(t), bg.ID)
	if !errors.Is(err, residency.ErrResidentOnly) || !strings.Contains(err.Error(), "sleep") {
		t.Errorf("Teardown of %s: %v, want ErrResidentOnly naming sleep", bg.ID, err)
	}

	got, id2 := act(t, m, b, a, 2, sumFiles)
	if id2 == id1 {
		t.Fatalf("rematerialized into the same sandbox id %s", id1)
	}
	if got != want {
		t.Errorf("after rematerialization:\n%s\nwant\n%s", got, want)
	}
	if !slices.Contains(n.live(t), id2) {
		t.Errorf("rematerialized sandbox %s not announced with Up", id2)
	}
	if mt := m.Residency().Metrics(); mt.Teardowns != 1 || mt.Rematerializations != 1 {
		t.Errorf("metrics: %+v, want 1 teardown and 1 rematerialization", mt)
	}
	for _, ag := range []*controller.Agent{a, bg} {
		if err := m.Release(lctx(t), ag); err != nil {
			t.Errorf("Release(%s): %v", ag.ID, err)
		}
	}
	if live := n.live(t); len(live) != 0 {
		t.Errorf("sandboxes still live after Release: %v", live)
	}
}

// BenchmarkLiveDockerLayer200MB is BenchmarkLiveLayer200MB/random on the
// docker backend: teardown and rematerialization of a container whose
// writable layer holds 200 MiB of random data plus 8 MiB of workspace.
//
//	go test ./internal/residency/managed -run '^$' -bench LiveDockerLayer200MB -benchtime 5x
func BenchmarkLiveDockerLayer200MB(b *testing.B) {
	e := newLiveEnv(b)
	be := dockerBackend(b, e)
	var p pressureVar
	m := newManager(b, e, newNotes().host(be, "dn"), &p)
	b.Cleanup(func() { m.Close() })
	ctx := context.Background()
	a := agent("big", 2)
	step := boundaryStep(b, m, be, a)
	b.Logf("layer: %s MiB", step("set -e; mkdir -p /opt/big /workspace/w; for i in $(seq 200); do head -c 1048576 /dev/urandom > /opt/big/f$i; done; "+
		"for i in $(seq 8); do head -c 1048576 /dev/urandom > /workspace/w/f$i; done; du -sm /opt/big | cut -f1"))
	var td, rm, tdCPU, rmCPU time.Duration
	b.ResetTimer()
	for range b.N {
		t0, c0 := time.Now(), cpuTime()
		if err := m.Residency().Teardown(ctx, a.ID); err != nil {
			b.Fatal(err)
		}
		t1, c1 := time.Now(), cpuTime()
		if _, err := m.Ensure(ctx, a); err != nil {
			b.Fatal(err)
		}
		t2, c2 := time.Now(), cpuTime()
		td, rm = td+t1.Sub(t0), rm+t2.Sub(t1)
		tdCPU, rmCPU = tdCPU+c1-c0, rmCPU+c2-c1
		b.StopTimer()
		if err := m.Boundary(ctx, a, controller.Outcome{Sandbox: a.SandboxID}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.StopTimer()
	out := step("du -sm /opt/big | cut -f1")
	if mib, err := strconv.Atoi(strings.TrimSpace(out)); err != nil || mib < 200 {
		b.Fatalf("layer after the last rematerialization: %q MiB, want at least 200", out)
	}
	b.ReportMetric(float64(td.Milliseconds())/float64(b.N), "teardown-ms")
	b.ReportMetric(float64(rm.Milliseconds())/float64(b.N), "remat-ms")
	b.ReportMetric(float64(tdCPU.Milliseconds())/float64(b.N), "teardown-cpu-ms")
	b.ReportMetric(float64(rmCPU.Milliseconds())/float64(b.N), "remat-cpu-ms")
	if err := m.Release(ctx, a); err != nil {
		b.Error(err)
	}
}
