//go:build linux

package process

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/moby/sys/user"
	"golang.org/x/sys/unix"

	"github.com/tenon-dev/tenon/internal/imagestore"
	"github.com/tenon-dev/tenon/internal/sandbox"
)

// imageRoot is the root of a sandbox of an imported image: the image's
// layer directories (the store's, shared by every sandbox of the image)
// as overlayfs lower directories, and the sandbox's own upper directory,
// its writable layer.
type imageRoot struct {
	image  imagestore.Image
	upper  string // the writable layer (what WritableLayer returns)
	work   string // overlayfs's work directory, on the upper's file system
	merged string // the overlay's mount point, the container's rootfs
	// env, cwd and cred apply to every action (the image's Env, WorkingDir
	// and User; Spec.Env after Env).
	env  []string
	cwd  string
	cred *credential
}

// holdKey is the image store holder key of a sandbox.
func holdKey(id string) string { return "sandbox " + id }

// isHostImage reports whether an image name means the host's root.
func isHostImage(name string) bool { return name == "" || name == "host" }

// mountImageRoot makes the upper directory (from a captured layer when
// from is set), mounts the overlay and resolves the image's user.
func mountImageRoot(ir *imageRoot, lowers []string, from string, specEnv []string) error {
	if from != "" {
		if err := moveTree(from, ir.upper); err != nil {
			return fmt.Errorf("moving rootfs-from into place (put it on the state dir's file system): %w", err)
		}
		if err := os.Chmod(ir.upper, 0o755); err != nil {
			return fmt.Errorf("adopting rootfs: %w", err)
		}
	} else if err := os.Mkdir(ir.upper, 0o755); err != nil {
		return fmt.Errorf("creating the writable layer: %w", err)
	}
	for _, d := range []string{ir.work, ir.merged} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return fmt.Errorf("creating %s: %w", d, err)
		}
	}
	if err := mountOverlay(lowers, ir.upper, ir.work, ir.merged); err != nil {
		return err
	}
	cfg := ir.image.Config
	eu, err := resolveUser(ir.merged, cfg.User)
	if err != nil {
		return fmt.Errorf("image %s: user %q: %w", ir.image.ShortID(), cfg.User, err)
	}
	var base []string
	if eu.Home != "" {
		base = []string{"HOME=" + eu.Home}
	}
	ir.env = mergeEnv(base, cfg.Env, specEnv)
	ir.cwd = cfg.WorkingDir
	if eu.Uid != 0 || eu.Gid != 0 || len(eu.Sgids) > 0 {
		ir.cred = &credential{Uid: uint32(eu.Uid), Gid: uint32(eu.Gid)}
		for _, g := range eu.Sgids {
			ir.cred.Groups = append(ir.cred.Groups, uint32(g))
		}
	}
	return nil
}

// mountOverlay mounts an overlay of lowers (top first) and upper on target
// in the host's mount namespace, with index=off where the kernel knows the
// option (the lower directories are shared by many overlays).
func mountOverlay(lowers []string, upper, work, target string) error {
	for _, p := range append([]string{upper, work}, lowers...) {
		if strings.ContainsAny(p, ",:") {
			return fmt.Errorf("overlay path %q contains ',' or ':': use a state directory without them", p)
		}
	}
	opts := "lowerdir=" + strings.Join(lowers, ":") + ",upperdir=" + upper + ",workdir=" + work
	if len(opts)+len(",index=off") >= os.Getpagesize() {
		return fmt.Errorf("overlay options of %d layers are %d bytes, over the kernel's %d: use a shorter state directory path",
			len(lowers), len(opts), os.Getpagesize())
	}
	// nosuid, nodev: the merged tree is the sandbox's writing, visible on
	// the host under the state directory; a setuid-root file a sandbox
	// made (it has CAP_CHOWN and CAP_FOWNER) must not run as root from
	// the host. Inside, no_new_privs ignores setuid bits anyway, and /dev
	// is a mount of its own.
	const flags = unix.MS_NOSUID | unix.MS_NODEV
	err := unix.Mount("overlay", target, "overlay", flags, opts+",index=off")
	if errors.Is(err, unix.EINVAL) {
		err = unix.Mount("overlay", target, "overlay", flags, opts)
	}
	if errors.Is(err, unix.ENODEV) {
		return fmt.Errorf("mounting the image's overlay on %s: the kernel has no overlayfs (modprobe overlay): %w", target, err)
	}
	if err != nil {
		return fmt.Errorf("mounting the image's overlay on %s: %w", target, err)
	}
	return nil
}

// resolveUser resolves an image's User ("name", "uid", "uid:gid",
// "name:group") against the /etc/passwd and /etc/group of root (read
// inside it: a symlink there cannot lead out). An empty spec is root.
func resolveUser(root, spec string) (*user.ExecUser, error) {
	def := &user.ExecUser{Home: "/root"}
	if spec == "" {
		return def, nil
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	open := func(name string) io.Reader {
		f, err := r.Open(name)
		if err != nil {
			return nil
		}
		b, err := io.ReadAll(io.LimitReader(f, 4<<20))
		f.Close()
		if err != nil {
			return nil
		}
		return strings.NewReader(string(b))
	}
	passwd, group := open("etc/passwd"), open("etc/group")
	return user.GetExecUser(spec, def, passwd, group)
}

// chownWorkspace gives a non-root image user the workspace's top directory
// (not its content), so the user can write /workspace.
func chownWorkspace(dir string, c *credential) error {
	if c == nil || c.Uid == 0 {
		return nil
	}
	if err := os.Lchown(dir, int(c.Uid), int(c.Gid)); err != nil {
		return fmt.Errorf("giving the workspace to the image's user: %w", err)
	}
	return nil
}

var _ sandbox.ImageResolver = (*Backend)(nil)

// ResolveImage pins an image name of the store to its id
// (imagestore.Pinned); "" and "host" stay as they are.
func (b *Backend) ResolveImage(name string) (string, error) {
	if isHostImage(name) {
		return name, nil
	}
	if b.cfg.Images == nil {
		return "", fmt.Errorf("image %q: this process backend has no image store, only \"host\": %w", name, sandbox.ErrUnsupportedImage)
	}
	im, err := b.cfg.Images.Get(name)
	if err != nil {
		return "", fmt.Errorf("%w: %w", sandbox.ErrUnsupportedImage, err)
	}
	return imagestore.Pinned(name, im), nil
}

// HoldImage holds the image ref names in the store for key.
func (b *Backend) HoldImage(key, ref string) error {
	if isHostImage(ref) || b.cfg.Images == nil {
		return nil
	}
	if _, err := b.cfg.Images.Hold(key, ref); err != nil {
		return fmt.Errorf("%w: %w", sandbox.ErrUnsupportedImage, err)
	}
	return nil
}

// ReleaseImage ends key's hold.
func (b *Backend) ReleaseImage(key string) {
	if b.cfg.Images == nil {
		return
	}
	if err := b.cfg.Images.Release(key); err != nil {
		b.log.Warn("releasing an image", "holder", key, "err", err)
	}
}

// rtDir is the directory of runtime mount points (makeRuntimeDir).
func (b *Backend) rtDir() string { return filepath.Join(b.cfg.StateDir, "rt") }
