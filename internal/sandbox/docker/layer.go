package docker

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/docker/docker/api/types/container"

	"github.com/tenon-dev/tenon/internal/fsutil"
	"github.com/tenon-dev/tenon/internal/sandbox"
)

// WritableLayer returns the host directory holding the sandbox's writable
// layer (overlay2's UpperDir): every file the sandbox created or changed
// outside its bind mounts. Deleted base files appear as overlay whiteouts
// (0:0 character devices). Read it only while the sandbox is paused or idle.
func (b *Backend) WritableLayer(id string) (string, error) {
	bx, err := b.lookup(id)
	if err != nil {
		return "", err
	}
	if bx.upper == "" {
		return "", fmt.Errorf("sandbox %s: storage driver %q: %w", id, b.driver, ErrNoLayerDir)
	}
	return bx.upper, nil
}

// SupportsRootfsFrom reports whether Create honours sandbox.Spec.RootfsFrom:
// with the overlay2 storage driver, the captured layer becomes the new
// container's UpperDir before it starts.
func (b *Backend) SupportsRootfsFrom() bool { return b.driver == overlay2 }

// overlay2 is the storage driver whose layers are host directories.
const overlay2 = "overlay2"

// adoptLayer makes the captured writable layer from the UpperDir of the
// created, not yet started, container cid: a rename (a copy when from lies
// on another file system than dockerd's data root), so from is consumed.
func (b *Backend) adoptLayer(ctx context.Context, cid, from string) error {
	in, err := b.cli.ContainerInspect(ctx, cid)
	if err != nil {
		return daemonErr(b.cli, fmt.Errorf("inspecting container: %w", err))
	}
	upper := in.GraphDriver.Data["UpperDir"]
	if in.GraphDriver.Name != overlay2 || upper == "" {
		return fmt.Errorf("rootfs-from: storage driver %q: %w", in.GraphDriver.Name, ErrNoLayerDir)
	}
	fi, err := os.Lstat(from)
	if err != nil {
		return fmt.Errorf("rootfs-from: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("rootfs-from %s is not a directory: %w", from, sandbox.ErrInvalidSpec)
	}
	if err := fsutil.MoveDir(from, upper); err != nil {
		return fmt.Errorf("moving rootfs-from %s into the container's layer: %w", from, err)
	}
	if err := os.Chmod(upper, 0o755); err != nil {
		return fmt.Errorf("adopting rootfs-from: %w", err)
	}
	return nil
}

// RestoreLayer unpacks a tar stream at / of the sandbox through the engine
// (CopyToContainer): the copy-based way to rematerialize a sandbox's
// writable state into a fresh sandbox of the same image, which Spec.RootfsFrom
// replaced (bench/results/docker.md).
func (b *Backend) RestoreLayer(ctx context.Context, id string, tarStream io.Reader) error {
	bx, err := b.lookup(id)
	if err != nil {
		return err
	}
	if err := b.cli.CopyToContainer(ctx, bx.cid, "/", tarStream, container.CopyToContainerOptions{}); err != nil {
		return b.failed(ctx, bx, "restoring the writable layer", err)
	}
	return nil
}

// Export streams the sandbox's whole file system (base image and writable
// layer, without bind mounts) as a tar; the caller closes it.
func (b *Backend) Export(ctx context.Context, id string) (io.ReadCloser, error) {
	bx, err := b.lookup(id)
	if err != nil {
		return nil, err
	}
	rc, err := b.cli.ContainerExport(ctx, bx.cid)
	if err != nil {
		return nil, b.failed(ctx, bx, "exporting", err)
	}
	return rc, nil
}
