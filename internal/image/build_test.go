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

// fakeClient answers ImageInspect from a set of names.
type fakeClient struct {
	images map[string]bool
	err    error
}

func (f *fakeClient) ImageImport(context.Context, image.ImportSource, string, image.ImportOptions) (io.ReadCloser, error) {
	return nil, errors.New("not implemented")
}

func (f *fakeClient) ImageInspect(_ context.Context, name string, _ ...client.ImageInspectOption) (image.InspectResponse, error) {
	if f.err != nil {
		return image.InspectResponse{}, f.err
	}
	if !f.images[name] {
		return image.InspectResponse{}, fmt.Errorf("no such image: %s: %w", name, cerrdefs.ErrNotFound)
	}
	return image.InspectResponse{ID: "sha256:x"}, nil
}

func TestRequire(t *testing.T) {
	tests := []struct {
		name    string
		cli     *fakeClient
		wantErr error
		text    string
	}{
		{"present", &fakeClient{images: map[string]bool{DefaultName: true}}, nil, ""},
		{"missing", &fakeClient{}, ErrNotFound, "image tenon-base:latest not found: run 'tenon image build'"},
		{"engine error", &fakeClient{err: errors.New("boom")}, nil, "inspecting image tenon-base:latest: boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Require(context.Background(), tt.cli, DefaultName)
			if tt.text == "" {
				if err != nil {
					t.Fatalf("Require: %v", err)
				}
				return
			}
			if err == nil || err.Error() != tt.text || (tt.wantErr != nil && !errors.Is(err, tt.wantErr)) {
				t.Fatalf("Require = %v, want %q", err, tt.text)
			}
		})
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
	if ok, err := Exists(ctx, cli, name); ok || err != nil {
		t.Fatalf("Exists before Build = %v, %v", ok, err)
	}
	start := time.Now()
	if err := Build(ctx, cli, name, nil); err != nil {
		t.Fatalf("Build: %v", err)
	}
	in, err := cli.ImageInspect(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("built %s in %v: %d MB", name, time.Since(start).Round(time.Millisecond), in.Size>>20)
	if in.Config == nil || in.Config.Labels["tenon.image"] != "1" || in.Config.WorkingDir != sandboxWorkspace {
		t.Errorf("image config %+v: want label tenon.image=1 and workdir %s", in.Config, sandboxWorkspace)
	}
	if ok, err := Exists(ctx, cli, name); !ok || err != nil {
		t.Fatalf("Exists after Build = %v, %v", ok, err)
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
