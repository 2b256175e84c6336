//go:build linux

package process

import (
	"os"
	"path/filepath"
	"time"

	"github.com/opencontainers/runc/libcontainer"
	"golang.org/x/sys/unix"
)

// reapStale removes the sandboxes an earlier backend on the same StateDir
// left behind (a crash, a kill -9): their processes, cgroups and files.
// Failures are logged: a stale sandbox must not stop a new backend.
func (b *Backend) reapStale() {
	entries, _ := os.ReadDir(b.containersDir())
	for _, e := range entries {
		id := e.Name()
		log := b.log.With("sandbox", id)
		if c, err := libcontainer.Load(b.containersDir(), id); err == nil {
			if st, _ := c.Status(); st == libcontainer.Paused {
				_ = c.Resume()
			}
			_ = c.Signal(unix.SIGKILL)
			deadline := time.Now().Add(killTimeout)
			for {
				st, err := c.Status()
				if err != nil || st == libcontainer.Stopped || time.Now().After(deadline) {
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
			if err := c.Destroy(); err != nil {
				log.Warn("removing a stale sandbox", "err", err)
			}
		}
		if err := os.RemoveAll(filepath.Join(b.containersDir(), id)); err != nil {
			log.Warn("removing stale container state", "err", err)
		}
		log.Info("removed a stale sandbox")
	}
	boxes, _ := os.ReadDir(b.sandboxesDir())
	for _, e := range boxes {
		dir := filepath.Join(b.sandboxesDir(), e.Name())
		if b.cfg.SalvageDir != "" { // before the disk image is unmounted
			rootfs := filepath.Join(dir, diskDir, "rootfs")
			if _, err := os.Lstat(rootfs); err != nil {
				rootfs = filepath.Join(dir, "rootfs")
			}
			b.salvage(e.Name(), rootfs)
		}
		if err := unmountUnder(b.mountinfo(), dir); err != nil {
			b.log.Warn("unmounting stale sandbox files", "dir", dir, "err", err)
			continue
		}
		if err := os.RemoveAll(dir); err != nil {
			b.log.Warn("removing stale sandbox files", "dir", dir, "err", err)
		}
	}
}

// salvage moves a stale sandbox's rootfs to Config.SalvageDir/<id>.
func (b *Backend) salvage(id, rootfs string) {
	if _, err := os.Lstat(rootfs); err != nil {
		return
	}
	if err := os.MkdirAll(b.cfg.SalvageDir, 0o700); err != nil {
		b.log.Warn("salvaging a stale writable layer", "sandbox", id, "err", err)
		return
	}
	dst := filepath.Join(b.cfg.SalvageDir, id)
	if err := os.RemoveAll(dst); err != nil {
		b.log.Warn("salvaging a stale writable layer", "sandbox", id, "err", err)
		return
	}
	if err := moveTree(rootfs, dst); err != nil {
		b.log.Warn("salvaging a stale writable layer", "sandbox", id, "err", err)
		return
	}
	b.log.Info("salvaged a stale writable layer", "sandbox", id, "dir", dst)
}
