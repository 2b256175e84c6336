package main

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/random"

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
