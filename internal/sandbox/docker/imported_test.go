package docker

import (
	"fmt"
	"os"
	"testing"

	dimage "github.com/docker/docker/api/types/image"

	"github.com/tenon-dev/tenon/internal/imagestore/imagetest"
	"github.com/tenon-dev/tenon/internal/sandbox"
)

// TestImportedImage: a sandbox names an image of the image store the
// engine lacks; the backend loads it, and the sandbox runs on it.
func TestImportedImage(t *testing.T) {
	b := newBackend(t, 2<<30)
	ref := fmt.Sprintf("tenon-test-imported-%d:1", os.Getpid())
	store, _ := imagetest.ImportBusybox(t, ref)
	b.cfg.Images = store
	t.Cleanup(func() {
		if _, err := b.cli.ImageRemove(ctxT(t), ref, dimage.RemoveOptions{Force: true, PruneChildren: true}); err != nil {
			t.Errorf("removing %s from the engine: %v", ref, err)
		}
	})
	for _, id := range []string{"imp-1", "imp-2"} { // the second finds it loaded
		if _, err := b.Create(ctxT(t), sandbox.Spec{ID: id, Image: ref, Workspace: t.TempDir()}); err != nil {
			t.Fatalf("Create(%s) on an imported image: %v", id, err)
		}
		if got := mustSh(t, b, id, "cat /etc/issue; test -e /etc/motd || echo no-motd"); got != "image\nno-motd\n" {
			t.Errorf("%s: %q, want the image's files", id, got)
		}
	}
	if _, err := b.Create(ctxT(t), sandbox.Spec{ID: "imp-3", Image: "tenon-test-not-imported:1", Workspace: t.TempDir()}); err == nil {
		t.Error("a sandbox of an image neither the engine nor the store has was created")
	}
}
