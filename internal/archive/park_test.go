package archive

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

func TestParkAndReuse(t *testing.T) {
	ctx := context.Background()
	// Regular files with content in buildTree: a.txt (hard.txt links it),
	// bin/tool, big/blob.bin, deep/x/y/z/leaf, private/secret.
	const files = 5
	tests := []struct {
		name       string
		beforePark func(t *testing.T, src string)
		afterPark  func(t *testing.T, park string)
		wantParked int
		wantReused int
	}{
		{"intact", nil, nil, files, files},
		{"file changed after the capture is not parked", func(t *testing.T, src string) {
			mustWrite(t, filepath.Join(src, "bin/tool"), []byte("#!/bin/sh\necho XX\n"), 0o755)
		}, nil, files - 1, files - 1},
		{"parked file modified is not reused", nil, func(t *testing.T, park string) {
			p := filepath.Join(park, parkName("big/blob.bin"))
			f, err := os.OpenFile(p, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteAt([]byte("tampered"), 100)
			f.Close()
		}, files, files - 1},
		{"parked file replaced by a symlink is not reused", nil, func(t *testing.T, park string) {
			p := filepath.Join(park, parkName("private/secret"))
			os.Remove(p)
			if err := os.Symlink("/etc/passwd", p); err != nil {
				t.Fatal(err)
			}
		}, files, files - 1},
		{"parked file linked elsewhere too is not reused", nil, func(t *testing.T, park string) {
			if err := os.Link(filepath.Join(park, parkName("deep/x/y/z/leaf")), filepath.Join(t.TempDir(), "other")); err != nil {
				t.Fatal(err)
			}
		}, files, files - 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src, blobs, park := t.TempDir(), t.TempDir(), filepath.Join(t.TempDir(), "park")
			buildTree(t, src)
			want := snapshot(t, src)
			settle()
			ref, cache, err := CaptureTree(ctx, src, blobs, TreeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if tc.beforePark != nil {
				tc.beforePark(t, src)
			}
			n, err := Park(src, park, cache)
			if err != nil {
				t.Fatal(err)
			}
			if n != tc.wantParked {
				t.Errorf("parked %d files, want %d", n, tc.wantParked)
			}
			os.RemoveAll(src) // the sandbox is destroyed
			if tc.afterPark != nil {
				tc.afterPark(t, park)
			}
			dst := filepath.Join(t.TempDir(), "out")
			got, st, err := ExtractTreeWith(ctx, blobs, ref, dst, ExtractOptions{Reuse: park})
			if err != nil {
				t.Fatal(err)
			}
			if st.Files != files || st.Reused != tc.wantReused {
				t.Errorf("stats %+v, want %d files, %d reused", st, files, tc.wantReused)
			}
			compareTrees(t, want, snapshot(t, dst))
			if got.Len() != files {
				t.Errorf("stat cache holds %d files, want %d", got.Len(), files)
			}
			if e, _ := os.ReadDir(park); len(e) != tc.wantParked-tc.wantReused {
				t.Errorf("park holds %d names after extraction, want the %d not reused", len(e), tc.wantParked-tc.wantReused)
			}
		})
	}
}
