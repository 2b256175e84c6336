package residency

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestParkingAcrossTeardown checks that a teardown parks the captured
// files, the next rematerialization consumes the park and restores the
// same trees, and that NoParking parks nothing.
func TestParkingAcrossTeardown(t *testing.T) {
	tests := []struct {
		name      string
		noParking bool
	}{{"parking", false}, {"no parking", true}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			e := newEnv(t, func(c *Config) { c.NoParking = tc.noParking })
			id, err := e.m.Ensure(ctx, info("a"))
			if err != nil {
				t.Fatal(err)
			}
			populate(t, e.host, id)
			upper, ws, _ := e.host.Paths(ctx, id)
			wantU, wantW := tree(t, upper), tree(t, ws)
			ino0 := inodeOf(t, filepath.Join(ws, "data/blob.bin"))
			// Let the files' ctimes fall behind the capture's seal so its
			// stat cache vouches for them (see archive.StatCache.Seal).
			time.Sleep(50 * time.Millisecond)
			e.m.Boundary(ctx, "a", clean)
			if err := e.m.Teardown(ctx, "a"); err != nil {
				t.Fatal(err)
			}
			parked := countFiles(t, e.m.parkRoot())
			if tc.noParking && parked != 0 || !tc.noParking && parked < 3 {
				t.Errorf("%d files parked", parked)
			}
			id = ensureRestored(t, e, wantU, wantW)
			_, ws, _ = e.host.Paths(ctx, id)
			// A parked file is taken over: the very inode comes back. (Without
			// parking a new inode may still get a freed number: not checked.)
			if !tc.noParking && inodeOf(t, filepath.Join(ws, "data/blob.bin")) != ino0 {
				t.Error("parked file not taken over: new inode")
			}
			if n := countFiles(t, e.m.parkRoot()); n != 0 {
				t.Errorf("%d parked files left after rematerialization", n)
			}
		})
	}
}

func inodeOf(t *testing.T, p string) uint64 {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}

func countFiles(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
		}
		return nil
	})
	return n
}

// TestParkedCopiesStandInForCorruptBlobs checks that a parked file, which
// is re-hashed against the manifest's digest before it is adopted, is used
// instead of its content blob: with every content blob corrupt and every
// file parked, the rematerialization reads no blob and restores the trees
// exactly. (TestRematerializationNeverUsesCorruptState corrupts the parked
// copies too.)
func TestParkedCopiesStandInForCorruptBlobs(t *testing.T) {
	e := newEnv(t, nil)
	wantU, wantW := tearDownPopulated(t, e, true)
	data := filepath.Join(e.dir, "state/blobs/data")
	blobs, err := os.ReadDir(data)
	if err != nil || len(blobs) != 3 {
		t.Fatalf("%d content blobs, want 3 (two packs and data/blob.bin's): %v", len(blobs), err)
	}
	for _, b := range blobs {
		flip(t, filepath.Join(data, b.Name()))
	}
	ensureRestored(t, e, wantU, wantW)
	if n := countFiles(t, e.m.parkRoot()); n != 0 {
		t.Errorf("%d parked files left after rematerialization", n)
	}
}
