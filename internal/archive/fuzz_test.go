package archive

import (
	"archive/tar"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzExtractStaysInside feeds archives of two arbitrary entries (names,
// link targets, types) to ExtractRef and checks that nothing appears outside
// the destination. Run longer with: go test -fuzz FuzzExtractStaysInside ./internal/archive
func FuzzExtractStaysInside(f *testing.F) {
	f.Add("a", "/x", byte(tar.TypeSymlink), "a/f", "", byte(tar.TypeReg))
	f.Add("../x", "", byte(tar.TypeReg), "y", "../x", byte(tar.TypeLink))
	f.Add("d/", "", byte(tar.TypeDir), "d/../../z", "", byte(tar.TypeReg))
	f.Add("l", "..", byte(tar.TypeSymlink), "l/f", "", byte(tar.TypeReg))
	f.Add("h", "/etc/passwd", byte(tar.TypeLink), "s", "../../..", byte(tar.TypeSymlink))
	f.Fuzz(func(t *testing.T, n1, l1 string, t1 byte, n2, l2 string, t2 byte) {
		types := map[byte]bool{tar.TypeReg: true, tar.TypeDir: true, tar.TypeSymlink: true, tar.TypeLink: true, tar.TypeFifo: true}
		if !types[t1] || !types[t2] || strings.ContainsRune(n1+n2+l1+l2, 0) {
			t.Skip()
		}
		// The outside world is simulated by siblings of dst and the link
		// targets below; absolute names are made to point there.
		parent := t.TempDir()
		outside := filepath.Join(parent, "outside")
		os.Mkdir(outside, 0o755)
		fix := func(s string) string {
			if strings.HasPrefix(s, "/") {
				return outside + s
			}
			return s
		}
		blobs := filepath.Join(parent, "blobs")
		os.Mkdir(blobs, 0o755)
		hdrs := []tar.Header{
			{Name: fix(n1), Linkname: fix(l1), Typeflag: t1, Mode: 0o644},
			{Name: fix(n2), Linkname: fix(l2), Typeflag: t2, Mode: 0o644},
		}
		probe := tar.NewWriter(io.Discard)
		for _, h := range hdrs {
			if h.Typeflag == tar.TypeReg {
				h.Size = 3
			}
			if probe.WriteHeader(&h) != nil {
				t.Skip() // not representable as a tar header
			}
			probe.Write([]byte("one"))
		}
		ref := craft(t, blobs, hdrs, map[string]string{fix(n1): "one", fix(n2): "two"})
		dst := filepath.Join(parent, "dst")
		_ = ExtractRef(context.Background(), blobs, ref, dst)
		if es, _ := os.ReadDir(outside); len(es) != 0 {
			t.Fatalf("wrote outside the destination: %v", es)
		}
		es, _ := os.ReadDir(parent)
		for _, e := range es {
			switch e.Name() {
			case "outside", "blobs", "dst":
			default:
				t.Fatalf("wrote %s next to the destination", e.Name())
			}
		}
	})
}
