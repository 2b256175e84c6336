package containerdtest

import (
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/tenon-dev/tenon/internal/imagestore/imagetest"
)

// PauseCmd keeps a pod's sandbox container alive: the busybox image's
// stand-in for the pause binary.
var PauseCmd = []string{"/bin/sh", "-c", "trap 'exit 0' TERM; while :; do sleep 1; done"}

// BusyboxArchive writes the test busybox image (imagetest.Busybox) as a
// docker-archive tarball tagged ref, running as root with cmd as its
// command, and returns its path.
func BusyboxArchive(t *testing.T, ref string, cmd []string) string {
	t.Helper()
	img := imagetest.Busybox(t)
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.Config.User = "0"
	cf.Config.WorkingDir = "/"
	cf.Config.Cmd = cmd
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		t.Fatal(err)
	}
	tag, err := name.NewTag(ref)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "image.tar")
	if err := tarball.WriteToFile(path, tag, img); err != nil {
		t.Fatal(err)
	}
	return path
}
