//go:build linux

package process

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/archive"
	"github.com/tenon-dev/tenon/internal/image"
	"github.com/tenon-dev/tenon/internal/imagestore"
	"github.com/tenon-dev/tenon/internal/imagestore/imagetest"
	"github.com/tenon-dev/tenon/internal/procfs"
	"github.com/tenon-dev/tenon/internal/sandbox"
)

// imageBackend imports the busybox image into a store and returns a live
// backend running it, the store, and the image.
func imageBackend(t *testing.T) (*Backend, *imagestore.Store, imagestore.Image) {
	t.Helper()
	liveLayout(t)
	needOverlay(t)
	store, im := imagetest.ImportBusybox(t, "example.test/busybox:1")
	b, _ := liveBackend(t, 2<<30, func(c *Config) { c.Images = store })
	return b, store, im
}

// needOverlay skips unless the kernel has overlayfs (a module, maybe not
// loaded, as in internal/vmtest's guest).
func needOverlay(tb testing.TB) {
	tb.Helper()
	b, err := os.ReadFile("/proc/filesystems")
	if err != nil || !bytes.Contains(b, []byte("\toverlay\n")) {
		tb.Skip("image sandboxes need overlayfs: not in /proc/filesystems (modprobe overlay)")
	}
}

// mountOptions returns the per-mount options of the mount on target (rw,
// nosuid, nodev, ...), failing the test when nothing is mounted there.
func mountOptions(t *testing.T, target string) []string {
	t.Helper()
	m, ok := lastMount(t, target)
	if !ok {
		t.Fatalf("nothing mounted on %s", target)
	}
	return m.MountOptions
}

// lastMount is the mount on target that is visible (the last one in
// mountinfo); ok is false when nothing is mounted there.
func lastMount(t *testing.T, target string) (m procfs.Mount, ok bool) {
	t.Helper()
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ms, err := procfs.ParseMountinfo(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range ms {
		if x.MountPoint == target {
			m, ok = x, true
		}
	}
	return m, ok
}

// overlayLowers returns the lowerdir option of the overlay mounted on
// target (nil when there is none).
func overlayLowers(t *testing.T, target string) []string {
	t.Helper()
	m, ok := lastMount(t, target)
	if !ok {
		return nil
	}
	v, ok := m.Option("lowerdir")
	if !ok {
		return nil
	}
	return strings.Split(v, ":")
}

func TestImageSandboxesShareLowerDirs(t *testing.T) {
	b, store, im := imageBackend(t)
	ctx := liveCtx(t)
	for _, id := range []string{"img-a", "img-b"} {
		if _, err := b.Create(ctx, sandbox.Spec{ID: id, Image: "example.test/busybox:1", Env: []string{"FROM_SPEC=1"}}); err != nil {
			t.Fatalf("Create(%s): %v", id, err)
		}
	}
	want := store.LowerDirs(im)
	for _, id := range []string{"img-a", "img-b"} {
		bx, _ := b.get(id)
		if got := overlayLowers(t, bx.rootfs); !slices.Equal(got, want) {
			t.Errorf("%s: overlay lower dirs %v, want the store's %v", id, got, want)
		}
		// The merged tree is visible on the host: a setuid file a
		// sandbox writes there must not run as root from the host.
		if opts := mountOptions(t, bx.rootfs); !slices.Contains(opts, "nosuid") || !slices.Contains(opts, "nodev") {
			t.Errorf("%s: overlay mounted %v on the host, want nosuid and nodev", id, opts)
		}
	}

	// The image's config applies to actions; the top layer's whiteout
	// hides the base's /etc/motd.
	got := mustSh(t, b, "img-a", `echo "$GREETING $FROM_SPEC $HOME $(id -u):$(id -g) $(pwd)"; cat /etc/issue; test -e /etc/motd || echo no-motd`)
	if want := "from-the-image 1 /home/app 1000:1000 /srv\nimage\nno-motd\n"; got != want {
		t.Errorf("image sandbox says %q, want %q", got, want)
	}
	// The tenon executable (here the test binary, which serves `tenon
	// tool mem` as cmd/tenon does) runs there through the host's loader.
	if r, err := b.Exec(ctx, "img-a", sandbox.ExecRequest{Shell: "tenon tool mem --peak 4MiB --ramp 0 --hold 0s", Env: []string{"PATH=/usr/local/bin:/bin"},
		Timeout: 20 * time.Second}); err != nil || r.ExitCode != 0 {
		t.Errorf("tenon tool mem in the image sandbox: exit %d %q %v", r.ExitCode, r.Stderr, err)
	}

	// Writes stay in each sandbox's own upper directory.
	mustSh(t, b, "img-a", "echo a > /tmp/mine && echo ws > /workspace/w")
	if r, _ := b.Exec(ctx, "img-b", sandbox.ExecRequest{Shell: "cat /tmp/mine"}); r.ExitCode == 0 {
		t.Error("img-b sees img-a's /tmp/mine")
	}
	layer, err := b.WritableLayer("img-a")
	if err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(filepath.Join(layer, "tmp/mine")); err != nil || string(data) != "a\n" {
		t.Errorf("img-a's write in its writable layer %s: %q %v", layer, data, err)
	}
	for _, d := range want {
		if _, err := os.Stat(filepath.Join(d, "tmp/mine")); err == nil {
			t.Errorf("a sandbox wrote into the shared layer %s", d)
		}
	}

	// In use: not removable, from another process's view of the store.
	other, err := imagestore.Open(store.Root())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, _, err := other.Remove("example.test/busybox:1"); !errors.Is(err, imagestore.ErrInUse) {
		t.Fatalf("removing an image two sandboxes use: %v", err)
	}
	for _, id := range []string{"img-a", "img-b"} {
		if err := b.Destroy(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := other.Remove("example.test/busybox:1"); err != nil {
		t.Fatalf("removing the image once its sandboxes are gone: %v", err)
	}
	if _, err := b.Create(ctx, sandbox.Spec{ID: "img-c", Image: "example.test/busybox:1"}); !errors.Is(err, sandbox.ErrUnsupportedImage) || !errors.Is(err, imagestore.ErrNotFound) {
		t.Errorf("creating a sandbox of a removed image: %v", err)
	}
}

func TestImageResidencyRoundTrip(t *testing.T) {
	b, _, im := imageBackend(t)
	ctx := liveCtx(t)
	if _, err := b.Create(ctx, sandbox.Spec{ID: "rt-src", Image: im.ID}); err != nil {
		t.Fatal(err)
	}
	mustSh(t, b, "rt-src", "echo kept > /srv/new && rm /srv/old && echo ws > /workspace/w")
	layer, err := b.WritableLayer("rt-src")
	if err != nil {
		t.Fatal(err)
	}
	// As internal/residency does: capture the writable layer, tear the
	// sandbox down, extract the capture and start a sandbox from it.
	blobs := t.TempDir()
	ref, _, err := archive.CaptureTree(ctx, layer, blobs, archive.TreeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Destroy(ctx, "rt-src"); err != nil {
		t.Fatal(err)
	}
	restored := filepath.Join(b.cfg.StateDir, "restored")
	if _, err := archive.ExtractTree(ctx, blobs, ref, restored); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Create(ctx, sandbox.Spec{ID: "rt-dst", Image: imagestore.Pinned("example.test/busybox:1", im), RootfsFrom: restored}); err != nil {
		t.Fatal(err)
	}
	got := mustSh(t, b, "rt-dst", "cat /srv/new; test -e /srv/old || echo old-deleted; cat /etc/issue; test -e /workspace/w || echo no-ws")
	if want := "kept\nold-deleted\nimage\nno-ws\n"; got != want {
		t.Errorf("rematerialized sandbox says %q, want %q", got, want)
	}
	if _, err := os.Lstat(restored); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("RootfsFrom %s not consumed: %v", restored, err)
	}
}

// TestBuiltImageSandbox builds an image from two of the host's installed
// Debian packages (dash and time, as tenon image build does) into a fresh
// store and runs the package's binary in a sandbox of it.
func TestBuiltImageSandbox(t *testing.T) {
	liveLayout(t)
	needOverlay(t)
	store, err := imagestore.Open(filepath.Join(t.TempDir(), "images"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	cfg := image.Config{Packages: []string{"dash", "time"}, Extra: image.StoreExtra, Bytecode: true}
	im, _, err := image.BuildInto(liveCtx(t), store, cfg, imagestore.ImportOptions{Name: "example.test/built:1"})
	if errors.Is(err, image.ErrNoPackage) || errors.Is(err, os.ErrNotExist) {
		t.Skipf("building an image from host packages needs dpkg's database and the packages installed: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	b, _ := liveBackend(t, 1<<30, func(c *Config) { c.Images = store })
	ctx := liveCtx(t)
	if _, err := b.Create(ctx, sandbox.Spec{ID: "built", Image: "example.test/built:1"}); err != nil {
		t.Fatalf("Create: %v", err)
	}
	t.Cleanup(func() { _ = b.Destroy(context.Background(), "built") })
	r, err := b.Exec(ctx, "built", sandbox.ExecRequest{Shell: `/usr/bin/time -f "took %e s" sh -c 'echo ran in $(pwd)'; test ! -e /usr/bin/python3 || echo host-python`, Timeout: 20 * time.Second})
	if err != nil || r.ExitCode != 0 {
		t.Fatalf("/usr/bin/time in a sandbox of %s: %+v %v", im.ShortID(), r, err)
	}
	if got := string(r.Stdout); got != "ran in /workspace\n" {
		t.Errorf("stdout %q, want the command's output from the image's working directory and no host python3", got)
	}
	if !strings.HasPrefix(string(r.Stderr), "took ") {
		t.Errorf("stderr %q, want /usr/bin/time's report", r.Stderr)
	}
}
