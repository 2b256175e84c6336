package api

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/disk"
)

// Agent workspaces live in workspaces/<id>; with Config.WorkspaceMax each
// is a mounted disk image, workspaces/<id>.img (internal/disk). The
// images outlive the server (a restart mounts them again, recovering the
// files); deleting the agent removes them. A crash leaves the mounts,
// which the next start replaces. The sandbox manager must leave the
// workspace directories where they are (keepsWorkspaces): the keep-
// resident one does, and so does the residency manager tenon serve builds
// (managed.Config.KeepWorkspaces: a teardown keeps the workspace in place
// and the rematerialized sandbox mounts it again). Under one that moves
// them the limit is off (New).

// keepsWorkspaces reports whether the sandbox manager leaves agent
// workspaces in place: the keep-resident one, or one that says so
// (managed.Manager.KeepsWorkspaces).
func keepsWorkspaces(mgr controller.Sandboxes) bool {
	if _, ok := mgr.(*controller.Resident); ok {
		return true
	}
	k, ok := mgr.(interface{ KeepsWorkspaces() bool })
	return ok && k.KeepsWorkspaces()
}

// workspaceFullBelow is the free space under which a workspace counts as
// full.
const workspaceFullBelow = 1 << 20

func (s *Server) workspaceImage(id string) string { return s.workspaceDir(id) + ".img" }

// makeWorkspace creates agent id's workspace, limited to WorkspaceMax.
func (s *Server) makeWorkspace(id string) error {
	dir := s.workspaceDir(id)
	if s.cfg.WorkspaceMax <= 0 {
		return os.MkdirAll(dir, 0o755)
	}
	if err := disk.Mount(s.workspaceImage(id), dir, s.cfg.WorkspaceMax); err != nil {
		return fmt.Errorf("limiting the workspace: %w", err)
	}
	return nil
}

// remountWorkspace mounts a recovered agent's workspace image again, first
// removing the mount a crashed server left on it. A workspace without an
// image (made with no limit) stays as it is; one with an image is mounted
// even when the limit is now off, so its files stay where they were.
func (s *Server) remountWorkspace(id string) error {
	if !s.hasImage(id) {
		return nil
	}
	if err := disk.Unmount(s.workspaceDir(id)); err != nil {
		return err
	}
	return disk.Mount(s.workspaceImage(id), s.workspaceDir(id), s.cfg.WorkspaceMax)
}

// hasImage reports whether agent id's workspace is a disk image.
func (s *Server) hasImage(id string) bool {
	_, err := os.Stat(s.workspaceImage(id))
	return err == nil
}

// unmountWorkspace unmounts agent id's workspace image, if any.
func (s *Server) unmountWorkspace(id string) error {
	if !s.hasImage(id) {
		return nil
	}
	return disk.Unmount(s.workspaceDir(id))
}

// removeWorkspace unmounts and deletes agent id's workspace and image.
func (s *Server) removeWorkspace(id string) error {
	if err := s.unmountWorkspace(id); err != nil {
		return err
	}
	if err := os.RemoveAll(s.workspaceDir(id)); err != nil {
		return err
	}
	if err := os.Remove(s.workspaceImage(id)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// workspaceFull reports whether ag's limited workspace has less than
// workspaceFullBelow bytes free.
func (s *Server) workspaceFull(ag *agent) bool {
	if !s.hasImage(ag.rec.ID) {
		return false
	}
	var st unix.Statfs_t
	if err := unix.Statfs(ag.workspace, &st); err != nil {
		return false
	}
	return int64(st.Bavail)*int64(st.Bsize) < workspaceFullBelow
}
