package image

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tenon-dev/tenon/internal/imagestore"
)

func TestPlanImage(t *testing.T) {
	root := fakeHost(t)
	plan, err := MakePlan(Config{HostRoot: root, Packages: []string{"dash"}})
	if err != nil {
		t.Fatal(err)
	}
	img, err := plan.Image()
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if _, err := plan.WriteTar(&want); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(want.Bytes())
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if len(cf.RootFS.DiffIDs) != 1 || cf.RootFS.DiffIDs[0].Hex != hex.EncodeToString(sum[:]) {
		t.Errorf("diff ids %v, want the one of WriteTar's stream sha256:%x", cf.RootFS.DiffIDs, sum)
	}
	if !slices.Equal(cf.Config.Env, []string{pathEnv}) || cf.Config.WorkingDir != sandboxWorkspace || cf.OS != "linux" {
		t.Errorf("config %+v (os %s), want PATH, working directory %s, linux", cf.Config, cf.OS, sandboxWorkspace)
	}
	fp, _ := plan.Fingerprint()
	if cf.Config.Labels[LabelFingerprint] != fp {
		t.Errorf("fingerprint label %q, want %q", cf.Config.Labels[LabelFingerprint], fp)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers %v, %v; want one", layers, err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || !bytes.Equal(got, want.Bytes()) {
		t.Errorf("layer stream: %d bytes (err %v), want WriteTar's %d", len(got), err, want.Len())
	}
}

func TestPlanImageIntoStore(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("unpacking a layer into the image store sets owners: needs root")
	}
	root := fakeHost(t)
	s, err := imagestore.Open(filepath.Join(t.TempDir(), "images"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	im, plan, err := BuildInto(ctx, s, Config{HostRoot: root, Packages: []string{"dash", "mawk"}}, imagestore.ImportOptions{Name: "example.test/built:1"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(plan.Packages, []string{"dash", "libc6", "mawk"}) || !strings.Contains(im.Source, "closure of dash,mawk") {
		t.Errorf("packages %v, source %q", plan.Packages, im.Source)
	}
	if got, err := s.Get("example.test/built:1"); err != nil || got.ID != im.ID || got.Config.WorkingDir != sandboxWorkspace {
		t.Fatalf("Get = %+v, %v; want image %s working in %s", got, err, im.ID, sandboxWorkspace)
	}
	dir := s.LowerDirs(im)[0]
	if b, err := os.ReadFile(filepath.Join(dir, "usr/bin/dash")); err != nil || string(b) != "#!dash" {
		t.Errorf("usr/bin/dash in the layer: %q, %v", b, err)
	}
	if l, err := os.Readlink(filepath.Join(dir, "usr/bin/awk")); err != nil || l != "/etc/alternatives/awk" {
		t.Errorf("usr/bin/awk in the layer: %q, %v", l, err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "etc/shadow")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("etc/shadow in the layer: %v, want it left out", err)
	}

	// A host file that changes between the image's making and its
	// unpacking fails the build, and leaves nothing behind.
	if err := os.WriteFile(filepath.Join(root, "usr/bin/mawk"), []byte("MAWK"), 0o755); err != nil {
		t.Fatal(err)
	}
	plan2, err := MakePlan(Config{HostRoot: root, Packages: []string{"mawk"}})
	if err != nil {
		t.Fatal(err)
	}
	img2, err := plan2.Image()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "usr/bin/mawk"), []byte("mawk"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Add(ctx, img2, "host packages mawk", imagestore.ImportOptions{Name: "example.test/changed:1"}); !errors.Is(err, imagestore.ErrCorrupt) {
		t.Fatalf("Add after a host file changed: %v, want ErrCorrupt", err)
	}
	ims, err := s.List()
	if err != nil || len(ims) != 1 || ims[0].ID != im.ID {
		t.Errorf("images after the failed build: %v, %v; want only %s", ims, err, im.ID)
	}
	ents, err := os.ReadDir(filepath.Dir(dir))
	if err != nil || len(ents) != 1 {
		t.Errorf("layers after the failed build: %v, %v; want only the first image's", ents, err)
	}
}
