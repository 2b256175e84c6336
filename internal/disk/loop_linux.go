//go:build linux

package disk

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// mountOptions: no inode table zeroing in the background (the image is
// new and sparse), and blocks of deleted files given back to the image.
const mountOptions = "noinit_itable,discard"

// Check reports whether limits can be made here (mkfs.ext4 and the loop
// control device).
func Check() error {
	if _, err := exec.LookPath("mkfs.ext4"); err != nil {
		return ErrNoMkfs
	}
	if _, err := os.Stat("/dev/loop-control"); err != nil {
		return fmt.Errorf("%w: %v", ErrUnsupported, err)
	}
	return nil
}

// Mount makes dir a file system of size bytes backed by image: it creates
// and formats image when it does not exist (an existing one keeps its
// size and content), creates dir, and mounts image on it. A fresh file
// system's root is mode 0755 with no lost+found.
func Mount(image, dir string, size int64) error {
	fresh := false
	if _, err := os.Stat(image); errors.Is(err, os.ErrNotExist) {
		if err := format(image, size); err != nil {
			return err
		}
		fresh = true
	} else if err != nil {
		return fmt.Errorf("disk: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("disk: %w", err)
	}
	if err := mountImage(image, dir); err != nil {
		if fresh {
			os.Remove(image)
		}
		return err
	}
	if fresh {
		_ = os.Remove(filepath.Join(dir, "lost+found"))
	}
	return nil
}

// format creates a sparse image of size bytes holding an empty ext4 file
// system without a journal (a sandbox's files do not outlive a crash of
// its host; residency captures them itself).
func format(image string, size int64) error {
	f, err := os.OpenFile(image, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("disk: %w", err)
	}
	err = f.Truncate(size)
	f.Close()
	if err != nil {
		os.Remove(image)
		return fmt.Errorf("disk: sizing %s: %w", image, err)
	}
	out, err := exec.Command("mkfs.ext4", "-q", "-F", "-O", "^has_journal",
		"-E", "lazy_itable_init=1,nodiscard,root_owner=0:0", "-m", "0", image).CombinedOutput()
	if err != nil {
		os.Remove(image)
		if errors.Is(err, exec.ErrNotFound) {
			return ErrNoMkfs
		}
		return fmt.Errorf("disk: mkfs.ext4 %s: %w: %s", image, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// mountImage attaches image to a free loop device (autoclear) and mounts
// it on dir. Another process may take the device between
// LOOP_CTL_GET_FREE and LOOP_CONFIGURE; it then tries the next one.
//
// An image still attached to a loop device is mounted from that device
// instead: its file system is still mounted somewhere (Unmount detached a
// busy mount lazily, and a dying sandbox's mount namespace still holds
// it), and a second loop device would give the same image a second,
// independent ext4 instance, each overwriting the other's metadata. The
// kernel shares the one instance between both mounts of the same device.
func mountImage(image, dir string) error {
	img, err := os.OpenFile(image, os.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("disk: %w", err)
	}
	defer img.Close()
	if dev, ok := attachedLoop(img); ok {
		// It may detach itself (autoclear) before the mount; a fresh
		// device is attached then.
		if unix.Mount(dev, dir, "ext4", unix.MS_NOSUID|unix.MS_NODEV, mountOptions) == nil {
			return nil
		}
	}
	ctl, err := os.OpenFile("/dev/loop-control", os.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUnsupported, err)
	}
	defer ctl.Close()
	for attempt := 0; ; attempt++ {
		n, err := unix.IoctlRetInt(int(ctl.Fd()), unix.LOOP_CTL_GET_FREE)
		if err != nil {
			return fmt.Errorf("disk: finding a free loop device: %w", err)
		}
		dev := fmt.Sprintf("/dev/loop%d", n)
		loop, err := os.OpenFile(dev, os.O_RDWR|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("disk: %w", err)
		}
		cfg := unix.LoopConfig{Fd: uint32(img.Fd())}
		cfg.Info.Flags = unix.LO_FLAGS_AUTOCLEAR
		copy(cfg.Info.File_name[:], image)
		err = unix.IoctlLoopConfigure(int(loop.Fd()), &cfg)
		if errors.Is(err, unix.EBUSY) && attempt < 20 {
			loop.Close()
			time.Sleep(time.Millisecond)
			continue
		}
		if err != nil {
			loop.Close()
			return fmt.Errorf("disk: attaching %s to %s: %w", image, dev, err)
		}
		err = unix.Mount(dev, dir, "ext4", unix.MS_NOSUID|unix.MS_NODEV, mountOptions)
		loop.Close() // the mount holds the device now; without it, autoclear detaches it
		if err != nil {
			return fmt.Errorf("disk: mounting %s on %s: %w", image, dir, err)
		}
		return nil
	}
}

// attachedLoop returns the loop device img is attached to, if any.
func attachedLoop(img *os.File) (string, bool) {
	var st unix.Stat_t
	if err := unix.Fstat(int(img.Fd()), &st); err != nil {
		return "", false
	}
	devs, _ := filepath.Glob("/sys/block/loop*")
	for _, d := range devs {
		dev := "/dev/" + filepath.Base(d)
		f, err := os.OpenFile(dev, os.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			continue
		}
		info, err := unix.IoctlLoopGetStatus64(int(f.Fd()))
		f.Close()
		if err == nil && info.Device == st.Dev && info.Inode == st.Ino {
			return dev, true
		}
	}
	return "", false
}

// Unmount unmounts dir (lazily when busy: a dying sandbox's mount
// namespace may still hold it); the loop device detaches itself when the
// last user goes. A dir that is not mounted is not an error.
func Unmount(dir string) error {
	err := unix.Unmount(dir, 0)
	if errors.Is(err, unix.EBUSY) {
		err = unix.Unmount(dir, unix.MNT_DETACH)
	}
	if err == nil || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOENT) {
		return nil
	}
	return fmt.Errorf("disk: unmounting %s: %w", dir, err)
}
