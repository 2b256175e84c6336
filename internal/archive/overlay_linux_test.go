package archive

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"golang.org/x/sys/unix"
)

// mountOverlay mounts an overlay and unmounts it at cleanup; it skips the
// test when overlay mounts are not permitted.
func mountOverlay(t *testing.T, lower, upper, work, merged string) {
	t.Helper()
	for _, d := range []string{upper, work, merged} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	opts := "lowerdir=" + lower + ",upperdir=" + upper + ",workdir=" + work
	if err := unix.Mount("overlay", merged, "overlay", 0, opts); err != nil {
		t.Skipf("overlayfs mount not available (needs root and overlay): %v", err)
	}
	t.Cleanup(func() { unix.Unmount(merged, unix.MNT_DETACH) })
}

func list(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		if err == nil && p != dir {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	sort.Strings(out)
	return out
}

// TestLiveOverlayUpperRoundTrip captures a real overlay upper dir holding a
// whiteout and an opaque directory, restores it into a fresh upper dir and
// checks the merged view: deleted lower files stay deleted.
func TestLiveOverlayUpperRoundTrip(t *testing.T) {
	base := t.TempDir()
	lower := filepath.Join(base, "lower")
	mustWrite(t, filepath.Join(lower, "keep"), []byte("k"), 0o644)
	mustWrite(t, filepath.Join(lower, "gone"), []byte("g"), 0o644)
	mustWrite(t, filepath.Join(lower, "d/old"), []byte("o"), 0o644)
	upper, merged := filepath.Join(base, "upper"), filepath.Join(base, "merged")
	mountOverlay(t, lower, upper, filepath.Join(base, "work"), merged)
	if err := os.Remove(filepath.Join(merged, "gone")); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(merged, "d")); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(merged, "d/new"), []byte("n"), 0o644)
	mustWrite(t, filepath.Join(merged, "added"), []byte("a"), 0o644)
	want := list(t, merged)
	if err := unix.Unmount(merged, 0); err != nil {
		t.Fatal(err)
	}

	ctx := context.Background()
	blobs := filepath.Join(base, "blobs")
	ref, _, err := CaptureTree(ctx, upper, blobs, TreeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	upper2, merged2 := filepath.Join(base, "upper2"), filepath.Join(base, "merged2")
	if err := ExtractRef(ctx, blobs, ref, upper2); err != nil {
		t.Fatal(err)
	}
	mountOverlay(t, lower, upper2, filepath.Join(base, "work2"), merged2)
	got := list(t, merged2)
	if len(got) != len(want) {
		t.Fatalf("merged view after restore = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("merged view after restore = %v, want %v", got, want)
		}
	}
	if _, err := os.Stat(filepath.Join(merged2, "gone")); !os.IsNotExist(err) {
		t.Errorf("deleted lower file reappeared (stat err %v)", err)
	}
}
