package docker

import (
	"archive/tar"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/docker/docker/api/types/container"

	"github.com/tenon-dev/tenon/internal/fsutil"
	"github.com/tenon-dev/tenon/internal/image"
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

// RestoreLayer unpacks a tar stream (as ArchiveLayer writes it) at / of the
// sandbox: used to rematerialize a sandbox's writable state into a fresh
// sandbox of the same image.
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

// ownMounts are the paths the backend bind-mounts into every container:
// their mount points in the writable layer are not the sandbox's state.
var ownMounts = map[string]bool{
	strings.TrimPrefix(InitPath, "/"):               true,
	strings.TrimPrefix(image.TenonPath, "/"):        true,
	strings.TrimPrefix(sandbox.WorkspaceMount, "/"): true,
}

// ArchiveLayer writes dir (a writable layer) to w as a tar with paths
// relative to dir. Overlay whiteouts (deleted base files) are skipped: a
// restore does not delete base files. So are the mount points of the
// backend's own bind mounts (init, tenon binary, workspace). It returns the
// file bytes written.
func ArchiveLayer(dir string, w io.Writer) (int64, error) {
	tw := tar.NewWriter(w)
	var total int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == "." {
			return err
		}
		if ownMounts[filepath.ToSlash(rel)] {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if fi.Mode()&fs.ModeCharDevice != 0 || fi.Mode()&(fs.ModeSocket|fs.ModeNamedPipe|fs.ModeDevice) != 0 {
			return nil // whiteout or special file
		}
		link := ""
		if fi.Mode()&fs.ModeSymlink != 0 {
			if link, err = os.Readlink(p); err != nil {
				return err
			}
		}
		h, err := tar.FileInfoHeader(fi, link)
		if err != nil {
			return err
		}
		h.Name = filepath.ToSlash(rel)
		if fi.IsDir() {
			h.Name += "/"
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if !fi.Mode().IsRegular() {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		n, err := io.CopyN(tw, f, h.Size)
		total += n
		return err
	})
	if err != nil {
		return total, fmt.Errorf("archiving layer %s: %w", dir, err)
	}
	return total, tw.Close()
}
