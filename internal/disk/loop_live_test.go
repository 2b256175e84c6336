//go:build linux

package disk

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// liveOK skips unless limits can be made: root, mkfs.ext4, loop devices.
func liveOK(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("size-limited directories need root (loop devices, mount)")
	}
	if err := Check(); err != nil {
		t.Skipf("size-limited directories: %v", err)
	}
}

// backing lists the loop devices whose backing file is image.
func backing(t *testing.T, image string) []string {
	t.Helper()
	files, _ := filepath.Glob("/sys/block/loop*/loop/backing_file")
	var out []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err == nil && strings.TrimSpace(string(b)) == image {
			out = append(out, f)
		}
	}
	return out
}

func TestLimitHit(t *testing.T) {
	liveOK(t)
	root := t.TempDir()
	image, dir := filepath.Join(root, "disk.img"), filepath.Join(root, "fs")
	if err := Mount(image, dir, 64<<20); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = Unmount(dir) })
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("fresh file system holds %v, want nothing (no lost+found)", ents)
	}
	f, err := os.Create(filepath.Join(dir, "big"))
	if err != nil {
		t.Fatal(err)
	}
	err = unix.Fallocate(int(f.Fd()), 0, 0, 128<<20)
	f.Close()
	if !errors.Is(err, unix.ENOSPC) {
		t.Errorf("fallocate 128 MiB in a 64 MiB directory = %v, want ENOSPC", err)
	}
	if fi, err := os.Stat(image); err != nil || fi.Size() != 64<<20 {
		t.Errorf("image %v, %v; want 64 MiB", fi, err)
	}
	if len(backing(t, image)) != 1 {
		t.Errorf("loop devices on %s: %v, want one", image, backing(t, image))
	}
	if err := Unmount(dir); err != nil {
		t.Fatal(err)
	}
	if b := backing(t, image); len(b) != 0 {
		t.Errorf("loop devices left after Unmount: %v", b)
	}
	// Mounted again, the image keeps its files.
	if err := Mount(image, dir, 1<<30); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "big")); err != nil {
		t.Errorf("file after remount: %v", err)
	}
	if err := Unmount(dir); err != nil {
		t.Fatal(err)
	}
}

// TestMountWhileStillMounted: an image whose file system is still mounted
// elsewhere (here a bind mount; in the daemon, a dying sandbox's mount
// namespace after a lazy Unmount) is mounted again from the same loop
// device, so both mounts are one ext4 instance: what one writes the other
// reads, and no second device is attached to the image.
func TestMountWhileStillMounted(t *testing.T) {
	liveOK(t)
	root := t.TempDir()
	image, dir, held := filepath.Join(root, "disk.img"), filepath.Join(root, "fs"), filepath.Join(root, "held")
	if err := Mount(image, dir, 64<<20); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(held, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount(dir, held, "", unix.MS_BIND, ""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Unmount(held, unix.MNT_DETACH) })
	if err := Unmount(dir); err != nil {
		t.Fatal(err)
	}
	if len(backing(t, image)) != 1 {
		t.Fatalf("after unmounting one of two mounts: loop devices %v, want one", backing(t, image))
	}
	if err := Mount(image, dir, 64<<20); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = Unmount(dir) })
	if b := backing(t, image); len(b) != 1 {
		t.Errorf("mounted again while still mounted: loop devices %v, want the one already attached", b)
	}
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(held, "f")); err != nil || string(b) != "x" {
		t.Errorf("the other mount reads %q, %v; want one file system", b, err)
	}
}
