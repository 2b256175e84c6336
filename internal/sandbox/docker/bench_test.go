package docker

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	dimage "github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"

	"github.com/tenon-dev/tenon/internal/sandbox"
)

// BenchmarkCreate measures create-to-ready (container created, started,
// cgroup and init tasks found); destroy is timed separately and reported
// as destroy-ms/op.
func BenchmarkCreate(b *testing.B) {
	be := newBackend(b, 4<<30)
	ctx := context.Background()
	ws := b.TempDir()
	var destroy time.Duration
	for i := 0; b.Loop(); i++ {
		id := fmt.Sprintf("bench-create-%d", i)
		if _, err := be.Create(ctx, sandbox.Spec{ID: id, Workspace: filepath.Join(ws, id)}); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		t := time.Now()
		if err := be.Destroy(ctx, id); err != nil {
			b.Fatal(err)
		}
		destroy += time.Since(t)
		b.StartTimer()
	}
	b.ReportMetric(float64(destroy.Microseconds())/float64(b.N)/1000, "destroy-ms/op")
}

// BenchmarkExec measures one action of `true` end to end.
func BenchmarkExec(b *testing.B) {
	be := newBackend(b, 4<<30)
	ctx := context.Background()
	if _, err := be.Create(ctx, sandbox.Spec{ID: "bench-exec", Workspace: b.TempDir()}); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		r, err := be.Exec(ctx, "bench-exec", sandbox.ExecRequest{Argv: []string{"true"}})
		if err != nil || r.ExitCode != 0 {
			b.Fatalf("exec true: %+v %v", r, err)
		}
	}
}

// TestMeasureCapture compares the ways to capture a sandbox's writable
// state (whole-filesystem export, a tar of the overlay upper directory,
// docker commit) on a 200 MB writable layer, and the ways to restore it
// into a fresh sandbox (CopyToContainer of the tar, or Spec.RootfsFrom: the
// staged layer renamed into the new container's UpperDir). It only runs
// with TENON_DOCKER_MEASURE=1 (it writes 200 MB several times).
func TestMeasureCapture(t *testing.T) {
	if os.Getenv("TENON_DOCKER_MEASURE") != "1" {
		t.Skip("set TENON_DOCKER_MEASURE=1 to measure capture and restore")
	}
	b := newBackend(t, 4<<30)
	ctx := ctxT(t)
	mustCreate(t, b, "cap", nil)
	mustSh(t, b, "cap", "mkdir -p /opt/data && head -c 200000000 /dev/urandom > /opt/data/big && echo small > /root/note && sync")
	dir := t.TempDir()
	timed := func(name string, f func() (int64, error)) {
		start := time.Now()
		n, err := f()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		el := time.Since(start)
		t.Logf("%-34s %8.1f MB %8v %7.0f MB/s", name, float64(n)/1e6, el.Round(time.Millisecond), float64(n)/1e6/el.Seconds())
	}
	toFile := func(name string, r io.Reader) (int64, error) {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return 0, err
		}
		defer f.Close()
		n, err := io.Copy(f, r)
		if err != nil {
			return n, err
		}
		return n, f.Sync()
	}
	if err := b.Pause(ctx, "cap"); err != nil {
		t.Fatal(err)
	}
	timed("(a) ContainerExport to file", func() (int64, error) {
		rc, err := b.Export(ctx, "cap")
		if err != nil {
			return 0, err
		}
		defer rc.Close()
		return toFile("export.tar", rc)
	})
	timed("(b) UpperDir tar to file", func() (int64, error) {
		layer, err := b.WritableLayer("cap")
		if err != nil {
			return 0, err
		}
		pr, pw := io.Pipe()
		go func() { _, err := ArchiveLayer(layer, pw); pw.CloseWithError(err) }()
		return toFile("layer.tar", pr)
	})
	cli := b.cli.(*client.Client)
	var committed string
	timed("(c) ContainerCommit (image per capture)", func() (int64, error) {
		r, err := cli.ContainerCommit(ctx, b.boxes["cap"].cid, container.CommitOptions{Pause: false})
		committed = r.ID
		return 200000000, err
	})
	t.Cleanup(func() {
		if _, err := cli.ImageRemove(context.Background(), committed, dimage.RemoveOptions{Force: true, PruneChildren: true}); err != nil {
			t.Errorf("removing committed image: %v", err)
		}
	})
	layer, err := b.WritableLayer("cap")
	if err != nil {
		t.Fatal(err)
	}
	staged := filepath.Join(dir, "staged")
	if out, err := exec.Command("cp", "-a", layer, staged).CombinedOutput(); err != nil {
		t.Fatalf("staging the layer: %v: %s", err, out)
	}
	if err := b.Resume(ctx, "cap"); err != nil {
		t.Fatal(err)
	}
	timed("restore: Create with RootfsFrom (rename)", func() (int64, error) {
		_, err := b.Create(ctx, sandbox.Spec{ID: "renamed", Workspace: filepath.Join(t.TempDir(), "ws"), RootfsFrom: staged})
		return 200000000, err
	})
	if got := mustSh(t, b, "renamed", "stat -c %s /opt/data/big; cat /root/note"); strings.Fields(got)[0] != "200000000" {
		t.Fatalf("renamed sandbox reads %q", got)
	}
	timed("restore: Create fresh sandbox", func() (int64, error) {
		_, err := b.Create(ctx, sandbox.Spec{ID: "restored", Workspace: filepath.Join(t.TempDir(), "ws")})
		return 0, err
	})
	timed("restore: CopyToContainer layer.tar", func() (int64, error) {
		f, err := os.Open(filepath.Join(dir, "layer.tar"))
		if err != nil {
			return 0, err
		}
		defer f.Close()
		fi, _ := f.Stat()
		return fi.Size(), b.RestoreLayer(ctx, "restored", f)
	})
	got := mustSh(t, b, "restored", "stat -c %s /opt/data/big; cat /root/note")
	if strings.Fields(got)[0] != "200000000" || !strings.HasSuffix(got, "small\n") {
		t.Fatalf("restored sandbox reads %q", got)
	}
}
