package archive

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// randBytes returns n deterministic pseudo-random bytes.
func randBytes(seed uint64, n int) []byte {
	r := rand.New(rand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8)}))
	b := make([]byte, n)
	for i := 0; i+8 <= n; i += 8 {
		v := r.Uint64()
		for j := range 8 {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	return b
}

func mustWrite(t testing.TB, p string, data []byte, mode fs.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

// buildTree makes a tree with every kind of node Capture supports.
func buildTree(t *testing.T, root string) {
	t.Helper()
	mustWrite(t, filepath.Join(root, "a.txt"), []byte("hello\n"), 0o644)
	mustWrite(t, filepath.Join(root, "empty"), nil, 0o600)
	mustWrite(t, filepath.Join(root, "bin/tool"), []byte("#!/bin/sh\necho hi\n"), 0o755)
	mustWrite(t, filepath.Join(root, "big/blob.bin"), randBytes(1, 20<<20), 0o640)
	mustWrite(t, filepath.Join(root, "deep/x/y/z/leaf"), []byte("leaf"), 0o444)
	if err := os.Mkdir(filepath.Join(root, "emptydir"), 0o711); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "private"), 0o700); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(root, "private/secret"), []byte("s"), 0o600)
	for _, l := range [][2]string{
		{"a.txt", "link-rel"},
		{"../a.txt", "bin/link-up"},
		{"/etc/alternatives/python3", "bin/python3"},
		{"missing-target", "dangling"},
	} {
		if err := os.Symlink(l[0], filepath.Join(root, l[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Link(filepath.Join(root, "a.txt"), filepath.Join(root, "hard.txt")); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(filepath.Join(root, "fifo"), 0o620); err != nil {
		t.Fatal(err)
	}
	mtime := time.Date(2025, 3, 4, 5, 6, 7, 123456789, time.UTC)
	for _, p := range []string{"a.txt", "deep/x", "emptydir", "big/blob.bin"} {
		if err := os.Chtimes(filepath.Join(root, p), mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
}

type node struct {
	mode   fs.FileMode
	mtime  time.Time
	target string
	data   string
	ino    uint64
	rdev   uint64
	xattr  string
}

// snapshot reads a tree into a map keyed by relative path.
func snapshot(t *testing.T, root string) map[string]node {
	t.Helper()
	out := map[string]node{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		st := fi.Sys().(*syscall.Stat_t)
		n := node{mode: fi.Mode(), mtime: fi.ModTime(), ino: st.Ino, rdev: st.Rdev}
		switch {
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			n.data = string(b)
		case fi.Mode()&fs.ModeSymlink != 0:
			n.target, _ = os.Readlink(p)
		}
		buf := make([]byte, 64)
		if k, err := unix.Lgetxattr(p, "trusted.overlay.opaque", buf); err == nil {
			n.xattr = string(buf[:k])
		}
		if rel != "." && !fi.IsDir() { // dir mtimes of the root change with the test itself
			n.mtime = fi.ModTime()
		}
		out[rel] = n
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func compareTrees(t *testing.T, want, got map[string]node) {
	t.Helper()
	if len(want) != len(got) {
		t.Errorf("entry count: got %d, want %d", len(got), len(want))
	}
	for p, w := range want {
		g, ok := got[p]
		if !ok {
			t.Errorf("%s: missing after extract", p)
			continue
		}
		if g.mode != w.mode {
			t.Errorf("%s: mode %v, want %v", p, g.mode, w.mode)
		}
		if !g.mtime.Equal(w.mtime) {
			t.Errorf("%s: mtime %v, want %v", p, g.mtime, w.mtime)
		}
		if g.data != w.data {
			t.Errorf("%s: content differs (%d vs %d bytes)", p, len(g.data), len(w.data))
		}
		if g.target != w.target || g.rdev != w.rdev || g.xattr != w.xattr {
			t.Errorf("%s: got target %q rdev %d xattr %q, want %q %d %q", p, g.target, g.rdev, g.xattr, w.target, w.rdev, w.xattr)
		}
	}
}

func TestOverlayMarkers(t *testing.T) {
	ctx := context.Background()
	src, blobs, dst := t.TempDir(), t.TempDir(), filepath.Join(t.TempDir(), "out")
	if err := unix.Mknod(filepath.Join(src, "deleted"), unix.S_IFCHR, 0); err != nil {
		t.Skipf("mknod of an overlay whiteout (0/0 char device) not permitted: %v", err)
	}
	if err := os.Mkdir(filepath.Join(src, "opaque"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Setxattr(filepath.Join(src, "opaque"), "trusted.overlay.opaque", []byte("y"), 0); err != nil {
		t.Skipf("trusted xattrs not supported here: %v", err)
	}
	mustWrite(t, filepath.Join(src, "opaque/new"), []byte("n"), 0o644)
	want := snapshot(t, src)
	ref, _, err := CaptureTree(ctx, src, blobs, TreeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ExtractTree(ctx, blobs, ref, dst); err != nil {
		t.Fatal(err)
	}
	got := snapshot(t, dst)
	compareTrees(t, want, got)
	if got["deleted"].mode&fs.ModeCharDevice == 0 {
		t.Errorf("whiteout restored as %v, want a char device", got["deleted"].mode)
	}
	if got["opaque"].xattr != "y" {
		t.Errorf("opaque xattr = %q, want y", got["opaque"].xattr)
	}
}

func TestCaptureRefusesDevices(t *testing.T) {
	src := t.TempDir()
	if err := unix.Mknod(filepath.Join(src, "null"), unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
		t.Skipf("mknod not permitted: %v", err)
	}
	blobs := t.TempDir()
	_, _, err := CaptureTree(context.Background(), src, blobs, TreeOptions{})
	if !errors.Is(err, ErrUnsupported) {
		t.Fatalf("err = %v, want ErrUnsupported", err)
	}
	filepath.WalkDir(blobs, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			t.Errorf("left behind after failure: %s", p)
		}
		return nil
	})
}

// enospcWriter fails with ENOSPC once more than limit bytes were written.
type enospcWriter struct {
	w     io.Writer
	limit int
}

func (e *enospcWriter) Write(p []byte) (int, error) {
	if len(p) > e.limit {
		n, _ := e.w.Write(p[:e.limit])
		e.limit = 0
		return n, syscall.ENOSPC
	}
	e.limit -= len(p)
	return e.w.Write(p)
}

// craft writes a gzip'd tar of the given headers into blobDir and returns its ref.
func craft(t *testing.T, blobDir string, entries []tar.Header, bodies map[string]string) Ref {
	t.Helper()
	src := filepath.Join(t.TempDir(), "crafted.tar")
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, h := range entries {
		h := h
		body := bodies[h.Name]
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(body))
		}
		if h.Mode == 0 {
			h.Mode = 0o644
		}
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		if body != "" {
			tw.Write([]byte(body))
		}
	}
	tw.Close()
	if err := os.WriteFile(src, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(buf.Bytes())
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	data := z.Bytes()
	sum := sha256Hex(data)
	p := filepath.Join(blobDir, sum+blobSuffix)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return Ref{Digest: DigestPrefix + sum, Size: int64(len(data)), Files: len(entries)}
}

func TestExtractRefusesUnsafe(t *testing.T) {
	etcName := "tenon-test-archive-" + strings.ReplaceAll(t.Name(), "/", "_")
	outside := t.TempDir()
	tests := []struct {
		name    string
		entries []tar.Header
		bodies  map[string]string
		want    string
	}{
		{"dotdot", []tar.Header{{Name: "../x", Typeflag: tar.TypeReg}}, map[string]string{"../x": "evil"}, `".."`},
		{"nested dotdot", []tar.Header{{Name: "a/../../x", Typeflag: tar.TypeReg}}, nil, `".."`},
		{"absolute", []tar.Header{{Name: "/etc/" + etcName, Typeflag: tar.TypeReg}}, map[string]string{"/etc/" + etcName: "evil"}, "absolute path"},
		{"symlink to /etc then file through it", []tar.Header{
			{Name: "etc", Typeflag: tar.TypeSymlink, Linkname: "/etc"},
			{Name: "etc/" + etcName, Typeflag: tar.TypeReg},
		}, map[string]string{"etc/" + etcName: "evil"}, "passes through symlink"},
		{"symlink to outside dir then file through it", []tar.Header{
			{Name: "out", Typeflag: tar.TypeSymlink, Linkname: outside},
			{Name: "out/x", Typeflag: tar.TypeReg},
		}, map[string]string{"out/x": "evil"}, "passes through symlink"},
		{"relative symlink escaping", []tar.Header{{Name: "d/up", Typeflag: tar.TypeSymlink, Linkname: "../../x"}}, nil, "points outside the tree"},
		{"symlink replaced by later file", []tar.Header{
			{Name: "l", Typeflag: tar.TypeSymlink, Linkname: outside + "/victim"},
			{Name: "l", Typeflag: tar.TypeReg},
		}, map[string]string{"l": "evil"}, "duplicate entry"},
		{"hardlink to absolute outside", []tar.Header{{Name: "h", Typeflag: tar.TypeLink, Linkname: "/etc/passwd"}}, nil, "outside the tree"},
		{"hardlink via dotdot", []tar.Header{{Name: "h", Typeflag: tar.TypeLink, Linkname: "../../etc/passwd"}}, nil, "outside the tree"},
		{"hardlink to a symlink", []tar.Header{
			{Name: "s", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"},
			{Name: "h", Typeflag: tar.TypeLink, Linkname: "s"},
		}, nil, "not a regular file"},
		{"device node", []tar.Header{{Name: "sda", Typeflag: tar.TypeBlock, Devmajor: 8}}, nil, "device node"},
		{"char device", []tar.Header{{Name: "null", Typeflag: tar.TypeChar, Devmajor: 1, Devminor: 3}}, nil, "device node"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			blobs := t.TempDir()
			ref := craft(t, blobs, tc.entries, tc.bodies)
			parent := t.TempDir()
			dst := filepath.Join(parent, "dst")
			err := ExtractRef(context.Background(), blobs, ref, dst)
			if !errors.Is(err, ErrUnsafeEntry) {
				t.Fatalf("err = %v, want ErrUnsafeEntry", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %q, want it to mention %q", err, tc.want)
			}
			if _, err := os.Lstat("/etc/" + etcName); err == nil {
				t.Errorf("/etc/%s was written", etcName)
			}
			if e, _ := os.ReadDir(outside); len(e) != 0 {
				t.Errorf("outside dir written: %v", e)
			}
			if e, _ := os.ReadDir(parent); len(e) != 1 {
				t.Errorf("parent of dst holds %d entries, want only dst", len(e))
			}
		})
	}
}

func TestExtractDigestMismatch(t *testing.T) {
	ctx := context.Background()
	blobs := t.TempDir()
	ref := craft(t, blobs, []tar.Header{{Name: "f", Typeflag: tar.TypeReg}}, map[string]string{"f": "payload"})
	p, _ := RefPath(blobs, ref)
	data, _ := os.ReadFile(p)
	data[len(data)/2] ^= 0xff
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "dst")
	if err := ExtractRef(ctx, blobs, ref, dst); !errors.Is(err, ErrDigestMismatch) {
		t.Fatalf("err = %v, want ErrDigestMismatch", err)
	}
	if _, err := os.Stat(dst); !os.IsNotExist(err) {
		t.Errorf("dst created despite digest mismatch (stat err %v)", err)
	}
	if err := ExtractRef(ctx, blobs, Ref{Digest: "sha256:nothex", Size: ref.Size}, dst); !errors.Is(err, ErrBadDigest) {
		t.Errorf("malformed digest: err = %v, want ErrBadDigest", err)
	}
}

func TestExtractNonEmptyDestination(t *testing.T) {
	ctx := context.Background()
	blobs, dst := t.TempDir(), t.TempDir()
	mustWrite(t, filepath.Join(dst, "old"), []byte("y"), 0o644)
	ref := craft(t, blobs, []tar.Header{{Name: "f", Typeflag: tar.TypeReg}}, map[string]string{"f": "x"})
	if err := ExtractRef(ctx, blobs, ref, dst); !errors.Is(err, ErrNotEmpty) {
		t.Fatalf("err = %v, want ErrNotEmpty", err)
	}
}

func TestCaptureCancelled(t *testing.T) {
	src, blobs := t.TempDir(), t.TempDir()
	mustWrite(t, filepath.Join(src, "f"), []byte("x"), 0o644)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := CaptureTree(ctx, src, blobs, TreeOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	filepath.WalkDir(blobs, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			t.Errorf("left behind after cancellation: %s", p)
		}
		return nil
	})
}
