package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/random"

	"github.com/tenon-dev/tenon/internal/image"
	"github.com/tenon-dev/tenon/internal/imagestore"
)

// TestImageCommands: import an OCI layout, list it (table and JSON),
// remove it, and fail on what is not there.
func TestImageCommands(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("unpacking layers keeps owners: needs root")
	}
	dir := t.TempDir()
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	img, err := random.Image(1024, 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.AppendImage(img); err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	ctx := context.Background()
	env := newTestEnv()
	if err := runImageImport(ctx, &env.cliEnv, []string{"--state-dir", state, "--name", "example.test/rand:1", dir}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(env.out.String(), "example.test/rand:1\t") || !strings.Contains(env.out.String(), "2 layers") {
		t.Errorf("import printed %q", env.out.String())
	}
	env = newTestEnv()
	if err := runImageLs(ctx, &env.cliEnv, []string{"--state-dir", state}); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(env.out.String()), "\n"); len(lines) != 2 || !strings.HasPrefix(lines[1], "example.test/rand:1 ") {
		t.Errorf("ls printed %q", env.out.String())
	}
	env = newTestEnv()
	if err := runImageLs(ctx, &env.cliEnv, []string{"--state-dir", state, "--json"}); err != nil {
		t.Fatal(err)
	}
	var ims []imagestore.Image
	if err := json.Unmarshal(env.out.Bytes(), &ims); err != nil || len(ims) != 1 || len(ims[0].Layers) != 2 {
		t.Fatalf("ls --json: %v %+v", err, ims)
	}
	env = newTestEnv()
	if err := runImageRm(ctx, &env.cliEnv, []string{"--state-dir", state, "example.test/rand:1"}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(env.out.String(), "removed example.test/rand:1") {
		t.Errorf("rm printed %q", env.out.String())
	}
	env = newTestEnv()
	if err := runImageRm(ctx, &env.cliEnv, []string{"--state-dir", state, "example.test/rand:1"}); err == nil {
		t.Error("removing a missing image succeeded")
	}
	if err := runImageImport(ctx, &env.cliEnv, []string{"--state-dir", state, t.TempDir()}); err == nil {
		t.Error("importing an empty directory succeeded")
	}
	env = newTestEnv()
	if err := runImageGC(ctx, &env.cliEnv, []string{"--state-dir", state}); err != nil || env.out.String() != "0 layers removed\n" {
		t.Errorf("gc after rm: %q %v", env.out.String(), err)
	}
}

// TestImageBuildCommand: tenon image build from a manifest's packages
// into a fresh store, and the refusal of packages not installed.
func TestImageBuildCommand(t *testing.T) {
	if _, err := os.Stat("/var/lib/dpkg/status"); err != nil {
		t.Skip("tenon image build reads dpkg's database: not a Debian host")
	}
	ctx := context.Background()
	state := t.TempDir()
	env := newTestEnv()
	err := runImageBuild(ctx, &env.cliEnv, []string{"--state-dir", state, "--packages", "time,tenon-no-such-package"})
	if !errors.Is(err, image.ErrNoPackage) || !strings.Contains(err.Error(), "tenon-no-such-package") {
		t.Fatalf("building with a package not installed: %v, want ErrNoPackage naming it", err)
	}
	manifest := filepath.Join(t.TempDir(), "manifest.json")
	if err := os.WriteFile(manifest, []byte(`{"debian_packages": []}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := runImageBuild(ctx, &env.cliEnv, []string{"--state-dir", state, "--manifest", manifest}); err == nil {
		t.Error("a manifest without packages was accepted")
	}
	if os.Geteuid() != 0 {
		t.Skip("unpacking the layer sets owners: needs root")
	}
	if err := os.WriteFile(manifest, []byte(`{"debian_packages": ["time"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	err = runImageBuild(ctx, &env.cliEnv, []string{"--state-dir", state, "--manifest", manifest, "--name", "example.test/real:1"})
	if errors.Is(err, image.ErrNoPackage) {
		t.Skipf("the host lacks a package of the image: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(env.out.String(), "example.test/real:1\t") || !strings.Contains(env.out.String(), "\t1 layers\t") {
		t.Errorf("build printed %q", env.out.String())
	}
	s, err := imagestore.Open(filepath.Join(state, "images"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	im, err := s.Get("example.test/real:1")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"usr/bin/time", "usr/bin/python3", "bin"} {
		if _, err := os.Lstat(filepath.Join(s.LowerDirs(im)[0], p)); err != nil {
			t.Errorf("the built image lacks /%s: %v", p, err)
		}
	}
}
