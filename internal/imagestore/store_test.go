package imagestore

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"golang.org/x/sys/unix"

	"github.com/tenon-dev/tenon/internal/archive"
)

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("unpacking layers makes whiteout devices, owners and trusted xattrs: needs root")
	}
}

// entry is one file of a test layer: a directory when name ends in "/",
// a symlink when link is set, else a regular file holding body.
type entry struct {
	name, body, link string
}

func tarOf(t *testing.T, ents ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range ents {
		h := &tar.Header{Name: e.name, Mode: 0o644, Typeflag: tar.TypeReg, Size: int64(len(e.body))}
		switch {
		case strings.HasSuffix(e.name, "/"):
			h.Typeflag, h.Mode, h.Size = tar.TypeDir, 0o755, 0
		case e.link != "":
			h.Typeflag, h.Linkname, h.Size = tar.TypeSymlink, e.link, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(e.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func layerOf(t *testing.T, ents ...entry) v1.Layer {
	t.Helper()
	b := tarOf(t, ents...)
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil })
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// testImage is two layers, the second deleting a file of the first and
// making a directory opaque, with Env, WorkingDir and User set.
func testImage(t *testing.T) v1.Image {
	t.Helper()
	base := layerOf(t,
		entry{name: "etc/"}, entry{name: "etc/motd", body: "hello\n"}, entry{name: "etc/passwd", body: "root:x:0:0::/root:/bin/sh\n"},
		entry{name: "opt/old/"}, entry{name: "opt/old/a", body: "a"},
		entry{name: "bin/sh-link", link: "/bin/busybox"},
	)
	top := layerOf(t,
		entry{name: "etc/"}, entry{name: "etc/.wh.motd"},
		entry{name: "opt/old/"}, entry{name: "opt/old/.wh..wh..opq"}, entry{name: "opt/old/b", body: "b"},
	)
	img, err := mutate.AppendLayers(empty.Image, base, top)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", goarch()
	cf.Config.Env = []string{"PATH=/opt/bin:/usr/bin:/bin", "GREETING=hi"}
	cf.Config.WorkingDir = "/srv"
	cf.Config.User = "1000:1000"
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func openStore(t *testing.T) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "images"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func dockerArchive(t *testing.T, ref string, img v1.Image) string {
	t.Helper()
	tag, err := name.NewTag(ref)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "image.tar")
	if err := tarball.WriteToFile(p, tag, img); err != nil {
		t.Fatal(err)
	}
	return p
}

// checkUnpacked checks the layers of testImage in the store.
func checkUnpacked(t *testing.T, s *Store, im Image) {
	t.Helper()
	if len(im.Layers) != 2 {
		t.Fatalf("layers %v, want 2", im.Layers)
	}
	lower := s.LowerDirs(im) // top first
	if b, err := os.ReadFile(filepath.Join(lower[1], "etc/motd")); err != nil || string(b) != "hello\n" {
		t.Errorf("base etc/motd: %q %v", b, err)
	}
	var st unix.Stat_t
	if err := unix.Lstat(filepath.Join(lower[0], "etc/motd"), &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFCHR || st.Rdev != 0 {
		t.Errorf("top etc/motd is not an overlay whiteout: mode %o %v", st.Mode, err)
	}
	buf := make([]byte, 4)
	if n, err := unix.Lgetxattr(filepath.Join(lower[0], "opt/old"), "trusted.overlay.opaque", buf); err != nil || string(buf[:n]) != "y" {
		t.Errorf("top opt/old is not opaque: %q %v", buf[:n], err)
	}
	if l, err := os.Readlink(filepath.Join(lower[1], "bin/sh-link")); err != nil || l != "/bin/busybox" {
		t.Errorf("symlink: %q %v", l, err)
	}
	want := Config{Env: []string{"PATH=/opt/bin:/usr/bin:/bin", "GREETING=hi"}, WorkingDir: "/srv", User: "1000:1000"}
	if strings.Join(im.Config.Env, ",") != strings.Join(want.Env, ",") || im.Config.WorkingDir != want.WorkingDir || im.Config.User != want.User {
		t.Errorf("config %+v, want %+v", im.Config, want)
	}
	if im.Size() != int64(len("hello\n")+len("root:x:0:0::/root:/bin/sh\n")+2) {
		t.Errorf("size %d", im.Size())
	}
}

func TestImportDockerArchive(t *testing.T) {
	needRoot(t)
	s := openStore(t)
	img := testImage(t)
	ims, err := s.Import(context.Background(), dockerArchive(t, "example.test/app:v1", img), ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ims) != 1 {
		t.Fatalf("imported %d images", len(ims))
	}
	id, _ := img.ConfigName()
	if ims[0].ID != id.String() {
		t.Errorf("id %s, want the config digest %s", ims[0].ID, id)
	}
	checkUnpacked(t, s, ims[0])
	for _, ref := range []string{"example.test/app:v1", id.String(), ims[0].ShortID(), Pinned("example.test/app:v1", ims[0])} {
		if got, err := s.Get(ref); err != nil || got.ID != ims[0].ID {
			t.Errorf("Get(%s) = %s, %v", ref, got.ID, err)
		}
	}
	if _, err := s.Get("example.test/app:v2"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get of a missing name: %v", err)
	}

	// The same layers again: nothing unpacked, the name moves to the new image.
	cf, _ := img.ConfigFile()
	cf = cf.DeepCopy()
	cf.Config.WorkingDir = "/other"
	img2, _ := mutate.ConfigFile(img, cf)
	unpacked := 0
	ims2, err := s.Import(context.Background(), dockerArchive(t, "example.test/app:v1", img2), ImportOptions{Progress: func(string, bool) { unpacked++ }})
	if err != nil {
		t.Fatal(err)
	}
	if unpacked != 0 {
		t.Errorf("re-importing shared layers unpacked %d", unpacked/2)
	}
	old, err := s.Get(ims[0].ID)
	if err != nil || len(old.Names) != 0 {
		t.Errorf("the first image kept its name: %+v %v", old, err)
	}
	if _, err := s.Get(Pinned("example.test/app:v1", ims[0])); !errors.Is(err, ErrNotFound) {
		t.Errorf("a pin to the image the name left resolved: %v", err)
	}
	if got, _ := s.Get("example.test/app:v1"); got.ID != ims2[0].ID {
		t.Errorf("name resolves to %s, want %s", got.ID, ims2[0].ID)
	}
}

func TestImportOCILayout(t *testing.T) {
	needRoot(t)
	dir := t.TempDir()
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	img := testImage(t)
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": "example.test/oci:1"})); err != nil {
		t.Fatal(err)
	}
	rnd, err := random.Image(2048, 3)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.AppendImage(rnd, layout.WithAnnotations(map[string]string{"io.containerd.image.name": "example.test/random:latest"})); err != nil {
		t.Fatal(err)
	}

	s := openStore(t)
	ims, err := s.Import(context.Background(), dir, ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ims) != 2 {
		t.Fatalf("imported %d images, want 2", len(ims))
	}
	checkUnpacked(t, s, ims[0])
	r, err := s.Get("example.test/random")
	if err != nil || len(r.Layers) != 3 {
		t.Fatalf("random image: %+v %v", r, err)
	}
	for _, d := range s.LowerDirs(r) {
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			t.Errorf("layer %s: %v", d, err)
		}
	}

	// The same layout as a tar.
	tarPath := filepath.Join(t.TempDir(), "oci.tar")
	if out, err := exec.Command("tar", "-C", dir, "-cf", tarPath, ".").CombinedOutput(); err != nil {
		t.Fatalf("tar: %v %s", err, out)
	}
	s2 := openStore(t)
	ims, err = s2.Import(context.Background(), tarPath, ImportOptions{})
	if err != nil || len(ims) != 2 {
		t.Fatalf("OCI tar: %d images, %v", len(ims), err)
	}
	checkUnpacked(t, s2, ims[0])
	if tmp, _ := os.ReadDir(s2.tmpDir()); len(tmp) != 0 {
		t.Errorf("tmp/ holds %d entries after the import", len(tmp))
	}
}

// assertEmpty checks that a failed import left no layer, record or
// temporary directory.
func assertEmpty(t *testing.T, s *Store) {
	t.Helper()
	for _, d := range []string{s.layersDir(), s.imagesDir(), s.tmpDir()} {
		if ents, _ := os.ReadDir(d); len(ents) != 0 {
			t.Errorf("%s holds %d entries after a failed import", d, len(ents))
		}
	}
}

func TestImportRefusesMaliciousLayers(t *testing.T) {
	needRoot(t)
	cases := []struct {
		name string
		ents []entry
	}{
		{"traversal", []entry{{name: "ok", body: "x"}, {name: "../../escape", body: "x"}}},
		{"symlink escape", []entry{{name: "up", link: "../../../"}}},
		{"write through a symlink", []entry{{name: "etc", link: "/etc"}, {name: "etc/cron.d/evil", body: "x"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			good := layerOf(t, entry{name: "fine/", body: ""}, entry{name: "fine/a", body: "a"})
			img, err := mutate.AppendLayers(empty.Image, good, layerOf(t, c.ents...))
			if err != nil {
				t.Fatal(err)
			}
			s := openStore(t)
			_, err = s.Import(context.Background(), dockerArchive(t, "example.test/evil:1", img), ImportOptions{})
			if !errors.Is(err, archive.ErrUnsafeEntry) {
				t.Fatalf("err = %v, want ErrUnsafeEntry", err)
			}
			ls, _ := img.Layers()
			d, _ := ls[1].DiffID()
			if !strings.Contains(err.Error(), d.String()) {
				t.Errorf("error %q does not name the layer %s", err, d)
			}
			assertEmpty(t, s)
		})
	}
	if _, err := os.Stat("/etc/cron.d/evil"); err == nil {
		t.Fatal("a layer wrote /etc/cron.d/evil on the host")
	}
}

// truncated is a layer whose uncompressed stream stops early.
type truncated struct {
	v1.Layer
	n int
}

func (l truncated) Uncompressed() (io.ReadCloser, error) {
	rc, err := l.Layer.Uncompressed()
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(io.LimitReader(rc, int64(l.n)))
	rc.Close()
	return io.NopCloser(bytes.NewReader(b)), err
}

// flipped is a layer one byte of whose file content differs.
type flipped struct{ v1.Layer }

func (l flipped) Uncompressed() (io.ReadCloser, error) {
	rc, err := l.Layer.Uncompressed()
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(rc)
	rc.Close()
	b[512] ^= 1 // the first byte of the first file's content
	return io.NopCloser(bytes.NewReader(b)), err
}

func TestImportCorruptLayer(t *testing.T) {
	needRoot(t)
	l := layerOf(t, entry{name: "big", body: strings.Repeat("x", 5000)})
	d, _ := l.DiffID()
	for _, c := range []struct {
		name  string
		layer v1.Layer
		want  error
	}{
		{"truncated", truncated{l, 2000}, nil},
		{"corrupt", flipped{l}, ErrCorrupt},
	} {
		t.Run(c.name, func(t *testing.T) {
			img, err := mutate.AppendLayers(empty.Image, layerOf(t, entry{name: "a", body: "a"}), l)
			if err != nil {
				t.Fatal(err)
			}
			ls, _ := img.Layers()
			ls[1] = c.layer
			s := openStore(t)
			_, err = s.add(context.Background(), named{img: layersSwapped{img, ls}, names: []string{"x"}}, "test", ImportOptions{})
			if err == nil || (c.want != nil && !errors.Is(err, c.want)) || !strings.Contains(err.Error(), d.String()) {
				t.Fatalf("err = %v, want one naming %s", err, d)
			}
			s.cleanAfter()
			assertEmpty(t, s)
		})
	}
}

// layersSwapped is an image whose Layers are replaced.
type layersSwapped struct {
	v1.Image
	layers []v1.Layer
}

func (i layersSwapped) Layers() ([]v1.Layer, error) { return i.layers, nil }

func TestRemoveInUseAndGC(t *testing.T) {
	needRoot(t)
	s := openStore(t)
	ims, err := s.Import(context.Background(), dockerArchive(t, "example.test/app:v1", testImage(t)), ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Another store on the same root stands for another process (a
	// running daemon): its hold is seen through its holder file.
	other, err := Open(s.Root())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Hold("sandbox-1", "example.test/app:v1"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Remove("example.test/app:v1"); !errors.Is(err, ErrInUse) || !strings.Contains(err.Error(), "sandbox-1") {
		t.Fatalf("Remove of an image in use: %v", err)
	}
	if err := other.Release("sandbox-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Hold("agent-7", ims[0].ID); err != nil {
		t.Fatal(err)
	}
	// A process that dies holds nothing: Close stands for its exit
	// (the flock goes with its descriptor).
	other.Close()
	if _, _, err := s.Remove("example.test/app:v1"); err != nil {
		t.Fatalf("Remove after the holder went: %v", err)
	}
	if ents, _ := os.ReadDir(s.layersDir()); len(ents) != 0 {
		t.Errorf("GC left %d layers", len(ents))
	}
	if _, err := s.Get(ims[0].ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get after Remove: %v", err)
	}
}

func TestRemoveKeepsSharedLayers(t *testing.T) {
	needRoot(t)
	s := openStore(t)
	img := testImage(t)
	more, err := mutate.AppendLayers(img, layerOf(t, entry{name: "extra", body: "e"}))
	if err != nil {
		t.Fatal(err)
	}
	for ref, im := range map[string]v1.Image{"example.test/a:1": img, "example.test/b:1": more} {
		if _, err := s.Import(context.Background(), dockerArchive(t, ref, im), ImportOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := s.Remove("example.test/b:1"); err != nil {
		t.Fatal(err)
	}
	a, err := s.Get("example.test/a:1")
	if err != nil {
		t.Fatal(err)
	}
	checkUnpacked(t, s, a)
	if ents, _ := os.ReadDir(s.layersDir()); len(ents) != 2 {
		t.Errorf("%d layers after removing b, want a's 2", len(ents))
	}
}

func TestPullFromRegistry(t *testing.T) {
	needRoot(t)
	srv := httptest.NewServer(registry.New())
	defer srv.Close()
	ref := strings.TrimPrefix(srv.URL, "http://") + "/test/app:v1"
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	img := testImage(t)
	if err := remote.Write(r, img); err != nil {
		t.Fatal(err)
	}
	s := openStore(t)
	im, err := s.Pull(context.Background(), ref, PullOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkUnpacked(t, s, im)
	if got, err := s.Get(ref); err != nil || got.ID != im.ID {
		t.Errorf("Get(%s): %v", ref, err)
	}
	if _, err := s.Pull(context.Background(), strings.TrimPrefix(srv.URL, "http://")+"/test/missing:v1", PullOptions{}); err == nil {
		t.Error("pulling a missing image succeeded")
	}
}

func goarch() string { return runtime.GOARCH }

// TestWriteDockerArchive: an exported image imports back with the same
// files, whiteouts, opaque directories and config.
func TestWriteDockerArchive(t *testing.T) {
	needRoot(t)
	s := openStore(t)
	if _, err := s.Import(context.Background(), dockerArchive(t, "example.test/app:v1", testImage(t)), ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "export.tar")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.WriteDockerArchive("example.test/app:v1", "example.test/exported:1", f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	s2 := openStore(t)
	ims, err := s2.Import(context.Background(), p, ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ims) != 1 || !slices.Equal(ims[0].Names, []string{"example.test/exported:1"}) {
		t.Fatalf("re-imported %+v", ims)
	}
	checkUnpacked(t, s2, ims[0])
}

// TestOpenMakesNothing: opening a store that is not there creates nothing
// (every live run opens one in case a sandbox names an image), reads as
// empty, and the first change makes it.
func TestOpenMakesNothing(t *testing.T) {
	root := filepath.Join(t.TempDir(), "images")
	s, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if all, err := s.List(); err != nil || len(all) != 0 {
		t.Fatalf("List of a missing store = %v, %v; want none, no error", all, err)
	}
	if _, err := s.Get("python:3.12"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get of a missing store: %v, want ErrNotFound", err)
	}
	if err := s.Release("nobody"); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(root); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("reading a missing store left %s behind (%v)", root, err)
	}
	if _, err := s.GC(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "images")); err != nil {
		t.Fatalf("a GC did not make the store: %v", err)
	}
}

// TestHolderLockAppearsLocked: a holder's .lock file is never seen
// unlocked (it is made as .lock.tmp, locked, then renamed), and liveHolds
// removes a crash's .lock.tmp once it is unlocked and old, never a fresh
// one (its maker may be about to lock it).
func TestHolderLockAppearsLocked(t *testing.T) {
	s := openStore(t)
	if _, err := s.ownHolder(); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(s.holdersDir())
	if err != nil {
		t.Fatal(err)
	}
	var locks int
	for _, e := range ents {
		switch {
		case strings.HasSuffix(e.Name(), ".lock"):
			locks++
		case strings.HasSuffix(e.Name(), ".tmp"):
			t.Errorf("ownHolder left %s", e.Name())
		}
	}
	if locks != 1 {
		t.Fatalf("%d holder lock files, want 1: %v", locks, ents)
	}
	fresh := filepath.Join(s.holdersDir(), "1-fresh.lock.tmp")
	stale := filepath.Join(s.holdersDir(), "1-stale.lock.tmp")
	for _, p := range []string{fresh, stale} {
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * staleTmpAge)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	holds, err := s.liveHolds()
	if err != nil {
		t.Fatal(err)
	}
	if len(holds) != 1 {
		t.Errorf("liveHolds = %d holders, want this store's 1", len(holds))
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("an old unlocked .lock.tmp: %v, want removed", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("a fresh .lock.tmp: %v, want kept", err)
	}
}
