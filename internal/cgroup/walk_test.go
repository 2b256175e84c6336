package cgroup

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestWalkGroups: every directory below the root is visited once, parents
// first, files and symlinks are not, and a listing that takes several
// getdents batches (hundreds of long names) is read whole.
func TestWalkGroups(t *testing.T) {
	root := t.TempDir()
	var want []string
	mk := func(rel string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(root, rel), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mk("a/b/c")
	mk("d")
	want = append(want, root, filepath.Join(root, "a"), filepath.Join(root, "a/b"), filepath.Join(root, "a/b/c"), filepath.Join(root, "d"))
	long := strings.Repeat("x", 200)
	for i := range 300 {
		n := filepath.Join("many", long+strconv.Itoa(i))
		mk(n)
		want = append(want, filepath.Join(root, n))
	}
	want = append(want, filepath.Join(root, "many"))
	if err := os.WriteFile(filepath.Join(root, "a", "cgroup.procs"), []byte("1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "a"), filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	var got []string
	err := walkGroups(root, func(d string) error {
		if d != root && !slices.Contains(got, filepath.Dir(d)) {
			t.Errorf("%s visited before its parent", d)
		}
		got = append(got, d)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("visited %d directories, want %d", len(got), len(want))
	}
	// A root that is gone is an empty walk, not an error.
	if err := walkGroups(filepath.Join(root, "gone"), func(string) error { t.Error("visited"); return nil }); err != nil {
		t.Errorf("missing root: %v", err)
	}
}

// TestReadControlSizes: readControl returns a file whole, whether its
// first read ends it (shorter than firstRead) or it takes more reads.
func TestReadControlSizes(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []int{0, 1, firstRead - 1, firstRead, firstRead + 1, 3*firstRead + 5, 9000} {
		want := bytes.Repeat([]byte("0123456789abcdef"), n/16+1)[:n]
		p := filepath.Join(dir, strconv.Itoa(n))
		if err := os.WriteFile(p, want, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := readControl(p)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%d bytes: read %d bytes, err %v", n, len(got), err)
		}
	}
}
