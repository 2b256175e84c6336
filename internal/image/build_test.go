package image

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"
	dockerspec "github.com/moby/docker-image-spec/specs-go/v1"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

func TestReadImportResult(t *testing.T) {
	tests := []struct {
		name, stream, id, err string
	}{
		{"ok", `{"status":"sha256:abc"}` + "\n", "sha256:abc", ""},
		{"progress then id", `{"status":"Importing","progressDetail":{}}{"status":"sha256:def"}`, "sha256:def", ""},
		{"error detail", `{"errorDetail":{"message":"bad tar"},"error":"bad tar"}`, "", "bad tar"},
		{"empty", ``, "", "no image id"},
		{"garbage", `{`, "", "reading engine response"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, err := readImportResult(strings.NewReader(tt.stream))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || id != tt.id {
				t.Fatalf("got %q %v, want %q", id, err, tt.id)
			}
		})
	}
}

// fakeClient answers ImageInspect from a set of names (labelled with
// labels[name]) and records imports and removals.
type fakeClient struct {
	images  map[string]bool
	labels  map[string]string // name → fingerprint label
	err     error
	imports int
	removed []string
}

func (f *fakeClient) ImageImport(_ context.Context, src image.ImportSource, ref string, opts image.ImportOptions) (io.ReadCloser, error) {
	if _, err := io.Copy(io.Discard, src.Source); err != nil {
		return nil, err
	}
	f.imports++
	for _, c := range opts.Changes {
		if v, ok := strings.CutPrefix(c, "LABEL "+LabelFingerprint+"="); ok {
			f.labels[ref] = v
		}
	}
	f.images[ref] = true
	return io.NopCloser(strings.NewReader(fmt.Sprintf(`{"status":"sha256:new%d"}`, f.imports))), nil
}

func (f *fakeClient) ImageInspect(_ context.Context, name string, _ ...client.ImageInspectOption) (image.InspectResponse, error) {
	if f.err != nil {
		return image.InspectResponse{}, f.err
	}
	if !f.images[name] {
		return image.InspectResponse{}, fmt.Errorf("no such image: %s: %w", name, cerrdefs.ErrNotFound)
	}
	return image.InspectResponse{ID: fmt.Sprintf("sha256:old%d", f.imports), Config: &dockerspec.DockerOCIImageConfig{
		ImageConfig: ocispec.ImageConfig{Labels: map[string]string{LabelFingerprint: f.labels[name]}},
	}}, nil
}

func (f *fakeClient) ImageRemove(_ context.Context, id string, _ image.RemoveOptions) ([]image.DeleteResponse, error) {
	f.removed = append(f.removed, id)
	return nil, nil
}

// TestBuildIdempotent: a second build of an unchanged plan imports
// nothing; a changed host package or Force imports again and removes the
// image the name referred to.
func TestBuildIdempotent(t *testing.T) {
	root := fakeHost(t)
	cfg := Config{HostRoot: root, Packages: []string{"dash", "mawk"}}
	cli := &fakeClient{images: map[string]bool{}, labels: map[string]string{}}
	ctx := context.Background()
	steps := []struct {
		name        string
		change      func()
		force       bool
		wantImports int
		upToDate    bool
		removed     int
	}{
		{"first build imports", nil, false, 1, false, 0},
		{"same plan is up to date", nil, false, 1, true, 0},
		{"changed package file rebuilds", func() {
			if err := os.WriteFile(filepath.Join(root, "usr/bin/mawk"), []byte("mawk 2, longer"), 0o755); err != nil {
				t.Fatal(err)
			}
		}, false, 2, false, 1},
		{"unchanged again", nil, false, 2, true, 1},
		{"force rebuilds", nil, true, 3, false, 2},
	}
	for _, st := range steps {
		if st.change != nil {
			st.change()
		}
		c := cfg
		c.Force = st.force
		res, err := BuildWith(ctx, cli, "tenon-test-image:latest", c, nil)
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if cli.imports != st.wantImports || res.UpToDate != st.upToDate || len(cli.removed) != st.removed || res.Fingerprint == "" {
			t.Fatalf("%s: imports %d, result %+v, removed %v; want %d imports, up to date %v, %d removed",
				st.name, cli.imports, res, cli.removed, st.wantImports, st.upToDate, st.removed)
		}
	}
}

func TestNotFoundError(t *testing.T) {
	var err error = &NotFoundError{Name: DefaultName}
	if want := "image tenon-base:latest not found: run 'tenon image build --docker'"; err.Error() != want || !errors.Is(err, ErrNotFound) {
		t.Fatalf("NotFoundError = %q (is ErrNotFound: %v), want %q wrapping ErrNotFound", err, errors.Is(err, ErrNotFound), want)
	}
}

// TestBuildLive builds the image from this host's packages, runs python3
// in it and removes it.
func TestBuildLive(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for the dockerd socket")
	}
	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		t.Skipf("docker client: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if _, err := cli.Ping(ctx); err != nil {
		t.Skipf("dockerd not reachable at %s: %v", cli.DaemonHost(), err)
	}
	if _, err := MakePlan(Config{}); errors.Is(err, ErrNoPackage) {
		t.Skipf("host lacks a package the image needs: %v", err)
	}
	name := fmt.Sprintf("tenon-test-image-%d:latest", os.Getpid())
	t.Cleanup(func() {
		if _, err := cli.ImageRemove(context.Background(), name, image.RemoveOptions{Force: true, PruneChildren: true}); err != nil && !client.IsErrNotFound(err) {
			t.Errorf("removing %s: %v", name, err)
		}
	})
	if _, err := cli.ImageInspect(ctx, name); !client.IsErrNotFound(err) {
		t.Fatalf("inspecting %s before the build: %v, want not found", name, err)
	}
	start := time.Now()
	first, err := BuildWith(ctx, cli, name, Config{}, nil)
	if err != nil || first.UpToDate {
		t.Fatalf("Build: %+v %v, want a new image", first, err)
	}
	// Idempotent: a second build of the same host imports nothing.
	again, err := BuildWith(ctx, cli, name, Config{}, nil)
	if err != nil || !again.UpToDate || again.ID != first.ID {
		t.Fatalf("second Build: %+v %v, want up to date with id %s", again, err, first.ID)
	}
	in, err := cli.ImageInspect(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("built %s in %v: %d MB", name, time.Since(start).Round(time.Millisecond), in.Size>>20)
	if in.Config == nil || in.Config.Labels["tenon.image"] != "1" || in.Config.WorkingDir != sandboxWorkspace {
		t.Errorf("image config %+v: want label tenon.image=1 and workdir %s", in.Config, sandboxWorkspace)
	}
	// Run python3 and coreutils in it, under a cgroup parent of the test's own.
	parent := fmt.Sprintf("tenon-test-image-%d", os.Getpid())
	t.Cleanup(func() {
		hs, _ := os.ReadDir("/sys/fs/cgroup")
		for _, h := range hs {
			if err := os.Remove(filepath.Join("/sys/fs/cgroup", h.Name(), parent)); err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Errorf("removing cgroup %s/%s: %v", h.Name(), parent, err)
			}
		}
	})
	c, err := cli.ContainerCreate(ctx, &container.Config{Image: name, Cmd: []string{"sh", "-c", "python3 -c 'print(6*7)' && ls /usr/bin/head"}},
		&container.HostConfig{NetworkMode: "none", Resources: container.Resources{CgroupParent: "/" + parent}}, nil, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cli.ContainerRemove(context.Background(), c.ID, container.RemoveOptions{Force: true, RemoveVolumes: true}); err != nil {
			t.Errorf("removing container: %v", err)
		}
	})
	if err := cli.ContainerStart(ctx, c.ID, container.StartOptions{}); err != nil {
		t.Fatal(err)
	}
	waitC, errC := cli.ContainerWait(ctx, c.ID, container.WaitConditionNotRunning)
	select {
	case w := <-waitC:
		if w.StatusCode != 0 {
			t.Fatalf("container exited %d", w.StatusCode)
		}
	case err := <-errC:
		t.Fatal(err)
	}
}
