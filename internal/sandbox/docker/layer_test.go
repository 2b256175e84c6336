package docker

import (
	"archive/tar"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/tenon-dev/tenon/internal/image"
	"github.com/tenon-dev/tenon/internal/sandbox"
)

// ownMounts are the paths the backend bind-mounts into every container:
// their mount points in the writable layer are not the sandbox's state.
var ownMounts = map[string]bool{
	strings.TrimPrefix(InitPath, "/"):               true,
	strings.TrimPrefix(image.TenonPath, "/"):        true,
	strings.TrimPrefix(sandbox.WorkspaceMount, "/"): true,
}

// ArchiveLayer writes dir (a writable layer) to w as a tar with paths
// relative to dir, the input RestoreLayer takes; the tests and the capture
// benchmark use it. Overlay whiteouts (deleted base files) are skipped: a
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
