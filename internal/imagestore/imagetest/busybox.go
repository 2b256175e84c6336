// Package imagetest builds small images for tests: a two-layer image
// around the host's static busybox, imported into a fresh image store.
package imagetest

import (
	"archive/tar"
	"bytes"
	"context"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/tenon-dev/tenon/internal/imagestore"
)

// Busybox builds a two-layer image around the host's static busybox:
// the base has /bin (busybox and its applets), /etc/passwd with user app
// (1000) and /etc/motd; the top deletes /etc/motd. Env, WorkingDir /srv
// and User app are set.
func Busybox(t testing.TB) v1.Image {
	t.Helper()
	bb, err := exec.LookPath("busybox")
	if err != nil {
		t.Skip("image sandbox tests build their image from a static busybox: install busybox-static")
	}
	if f, err := elf.Open(bb); err == nil {
		dynamic := slices.ContainsFunc(f.Progs, func(p *elf.Prog) bool { return p.Type == elf.PT_INTERP })
		f.Close()
		if dynamic {
			t.Skipf("busybox at %s is not statically linked: install busybox-static", bb)
		}
	}
	body, err := os.ReadFile(bb)
	if err != nil {
		t.Fatal(err)
	}
	var base bytes.Buffer
	tw := tar.NewWriter(&base)
	put := func(h *tar.Header, data []byte) {
		h.Size = int64(len(data))
		if h.Mode == 0 {
			h.Mode = 0o644
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"bin/", "etc/", "srv/", "tmp/", "home/", "home/app/"} {
		h := &tar.Header{Name: d, Typeflag: tar.TypeDir, Mode: 0o755}
		if d == "tmp/" {
			h.Mode = 0o1777
		}
		if d == "home/app/" || d == "srv/" {
			h.Uid, h.Gid = 1000, 1000
		}
		put(h, nil)
	}
	put(&tar.Header{Name: "bin/busybox", Typeflag: tar.TypeReg, Mode: 0o755}, body)
	for _, a := range []string{"sh", "cat", "echo", "id", "ls", "pwd", "rm", "stat", "true", "sleep", "touch", "printenv"} {
		put(&tar.Header{Name: "bin/" + a, Typeflag: tar.TypeSymlink, Linkname: "busybox"}, nil)
	}
	put(&tar.Header{Name: "etc/passwd", Typeflag: tar.TypeReg}, []byte("root:x:0:0:root:/root:/bin/sh\napp:x:1000:1000:app:/home/app:/bin/sh\n"))
	put(&tar.Header{Name: "etc/group", Typeflag: tar.TypeReg}, []byte("root:x:0:\napp:x:1000:\n"))
	put(&tar.Header{Name: "etc/motd", Typeflag: tar.TypeReg}, []byte("from the base layer\n"))
	put(&tar.Header{Name: "etc/issue", Typeflag: tar.TypeReg}, []byte("image\n"))
	put(&tar.Header{Name: "srv/old", Typeflag: tar.TypeReg, Uid: 1000, Gid: 1000}, []byte("old\n"))
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	var top bytes.Buffer
	tw = tar.NewWriter(&top)
	put(&tar.Header{Name: "etc/", Typeflag: tar.TypeDir, Mode: 0o755}, nil)
	put(&tar.Header{Name: "etc/.wh.motd", Typeflag: tar.TypeReg}, nil)
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	var layers []v1.Layer
	for _, b := range [][]byte{base.Bytes(), top.Bytes()} {
		l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil })
		if err != nil {
			t.Fatal(err)
		}
		layers = append(layers, l)
	}
	img, err := mutate.AppendLayers(empty.Image, layers...)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", runtime.GOARCH
	cf.Config.Env = []string{"PATH=/bin", "GREETING=from-the-image"}
	cf.Config.WorkingDir = "/srv"
	cf.Config.User = "app"
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		t.Fatal(err)
	}
	return img
}

// ImportBusybox imports Busybox under ref, through a docker archive, into
// a new store in a temporary directory (closed at cleanup).
func ImportBusybox(t testing.TB, ref string) (*imagestore.Store, imagestore.Image) {
	t.Helper()
	store, err := imagestore.Open(filepath.Join(t.TempDir(), "images"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return store, Import(t, store, ref, Busybox(t))
}

// Import imports img under ref, through a docker archive, into store.
func Import(t testing.TB, store *imagestore.Store, ref string, img v1.Image) imagestore.Image {
	t.Helper()
	tag, err := name.NewTag(ref)
	if err != nil {
		t.Fatal(err)
	}
	archivePath := filepath.Join(t.TempDir(), "image.tar")
	if err := tarball.WriteToFile(archivePath, tag, img); err != nil {
		t.Fatal(err)
	}
	ims, err := store.Import(context.Background(), archivePath, imagestore.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ims[0]
}

// DataLayer is a layer of n files of size bytes each, /data/f0000...,
// of pseudo-random content that depends on the file's index only, plus
// /data/salt holding salt (so that layers of different salts have the
// same files but different diff ids: copies of one layer).
func DataLayer(t testing.TB, n, size int, salt string) v1.Layer {
	t.Helper()
	opener := func() (io.ReadCloser, error) {
		pr, pw := io.Pipe()
		go func() {
			tw := tar.NewWriter(pw)
			err := tw.WriteHeader(&tar.Header{Name: "data/", Typeflag: tar.TypeDir, Mode: 0o755})
			buf := make([]byte, size)
			for i := 0; i < n && err == nil; i++ {
				rng := rand.New(rand.NewPCG(uint64(i), 42))
				for j := 0; j+8 <= size; j += 8 {
					binary.LittleEndian.PutUint64(buf[j:], rng.Uint64())
				}
				if err = tw.WriteHeader(&tar.Header{Name: fmt.Sprintf("data/f%04d", i), Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(size)}); err == nil {
					_, err = tw.Write(buf)
				}
			}
			if err == nil {
				if err = tw.WriteHeader(&tar.Header{Name: "data/salt", Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(salt))}); err == nil {
					_, err = tw.Write([]byte(salt))
				}
			}
			if err == nil {
				err = tw.Close()
			}
			pw.CloseWithError(err)
		}()
		return pr, nil
	}
	l, err := tarball.LayerFromOpener(opener)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// With is img with layers added on top.
func With(t testing.TB, img v1.Image, layers ...v1.Layer) v1.Image {
	t.Helper()
	out, err := mutate.AppendLayers(img, layers...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
