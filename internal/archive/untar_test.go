package archive

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

type tarEntry struct {
	name, body, link string
	typ              byte
}

func makeTar(t *testing.T, gz bool, entries ...tarEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	var w *tar.Writer
	var zw *gzip.Writer
	if gz {
		zw = gzip.NewWriter(&buf)
		w = tar.NewWriter(zw)
	} else {
		w = tar.NewWriter(&buf)
	}
	// git archive starts with a global header holding the commit.
	if err := w.WriteHeader(&tar.Header{Typeflag: tar.TypeXGlobalHeader, Name: "pax_global_header", PAXRecords: map[string]string{"comment": "abc"}}); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Typeflag: e.typ, Mode: 0o644, Linkname: e.link, Size: int64(len(e.body))}
		if e.typ == tar.TypeDir {
			h.Mode = 0o755
		}
		if e.typ != tar.TypeReg {
			h.Size = 0
		}
		if err := w.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Size > 0 {
			if _, err := w.Write([]byte(e.body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

func TestExtractTar(t *testing.T) {
	repo := []tarEntry{
		{name: "repo/", typ: tar.TypeDir},
		{name: "repo/pkg/", typ: tar.TypeDir},
		{name: "repo/pkg/mod.py", body: "x = 1\n", typ: tar.TypeReg},
		{name: "repo/link", link: "pkg/mod.py", typ: tar.TypeSymlink},
		{name: "repo/hard", link: "repo/pkg/mod.py", typ: tar.TypeLink},
	}
	for _, gz := range []bool{false, true} {
		dst := filepath.Join(t.TempDir(), "ws")
		n, err := ExtractTar(context.Background(), bytes.NewReader(makeTar(t, gz, repo...)), dst, 1)
		if err != nil {
			t.Fatalf("gzip %v: %v", gz, err)
		}
		if n != 4 { // the stripped top directory is skipped
			t.Errorf("gzip %v: %d entries, want 4", gz, n)
		}
		for _, p := range []string{"pkg/mod.py", "link", "hard"} {
			if b, err := os.ReadFile(filepath.Join(dst, p)); err != nil || string(b) != "x = 1\n" {
				t.Errorf("gzip %v: %s = %q, %v", gz, p, b, err)
			}
		}
	}
}

func TestExtractTarRefuses(t *testing.T) {
	tests := []struct {
		name    string
		entries []tarEntry
		strip   int
	}{
		{"absolute", []tarEntry{{name: "/etc/passwd", body: "x", typ: tar.TypeReg}}, 0},
		{"dot-dot", []tarEntry{{name: "repo/../../x", body: "x", typ: tar.TypeReg}}, 1},
		{"symlink escape", []tarEntry{{name: "r/up", link: "../../outside", typ: tar.TypeSymlink}}, 1},
		{"write through a symlink", []tarEntry{{name: "r/d", link: "/tmp", typ: tar.TypeSymlink}, {name: "r/d/x", body: "x", typ: tar.TypeReg}}, 1},
		{"device node", []tarEntry{{name: "r/null", typ: tar.TypeChar}}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			_, err := ExtractTar(context.Background(), bytes.NewReader(makeTar(t, true, tt.entries...)), filepath.Join(dir, "ws"), tt.strip)
			if !errors.Is(err, ErrUnsafeEntry) {
				t.Fatalf("ExtractTar = %v, want ErrUnsafeEntry", err)
			}
			if _, err := os.Stat(filepath.Join(dir, "x")); err == nil {
				t.Error("an entry landed outside the destination")
			}
		})
	}
	dst := t.TempDir()
	if err := os.WriteFile(filepath.Join(dst, "f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ExtractTar(context.Background(), bytes.NewReader(makeTar(t, false)), dst, 0); !errors.Is(err, ErrNotEmpty) {
		t.Errorf("into a non-empty directory: %v, want ErrNotEmpty", err)
	}
}

// TestExtractTarIgnoresPAXMarkers: an archive's overlay xattr records and
// tenon's whiteout marker do not reach a workspace: the file is a plain
// file with no overlay attribute.
func TestExtractTarIgnoresPAXMarkers(t *testing.T) {
	var buf bytes.Buffer
	w := tar.NewWriter(&buf)
	for _, h := range []*tar.Header{
		{Name: "dir/", Typeflag: tar.TypeDir, Mode: 0o755, Format: tar.FormatPAX,
			PAXRecords: map[string]string{paxXattrPrefix + "user.overlay.opaque": "y"}},
		{Name: "dir/gone", Typeflag: tar.TypeReg, Mode: 0o644, Format: tar.FormatPAX,
			PAXRecords: map[string]string{paxWhiteout: "1", paxXattrPrefix + "user.overlay.redirect": "/etc"}},
	} {
		if err := w.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "ws")
	if _, err := ExtractTar(context.Background(), &buf, dst, 0); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(filepath.Join(dst, "dir", "gone"))
	if err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("dir/gone: %v, %v; want a regular file, not a whiteout", fi, err)
	}
	for _, p := range []string{"dir", "dir/gone"} {
		sz, err := unix.Llistxattr(filepath.Join(dst, p), nil)
		if err != nil && !errors.Is(err, unix.ENOTSUP) {
			t.Fatal(err)
		}
		if sz > 0 {
			names := make([]byte, sz)
			n, _ := unix.Llistxattr(filepath.Join(dst, p), names)
			if bytes.Contains(names[:n], []byte("overlay")) {
				t.Errorf("%s has the archive's overlay xattrs: %q", p, names[:n])
			}
		}
	}
}
