package api

import (
	"archive/tar"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
)

// checkPath accepts a relative, local, slash-separated workspace path
// that names something inside the workspace (not the workspace itself,
// such as "a/..").
func checkPath(p string) error {
	if p == "" || strings.ContainsRune(p, 0) || strings.HasPrefix(p, "/") || !filepath.IsLocal(filepath.FromSlash(p)) ||
		path.Clean(p) == "." {
		return fmt.Errorf("%w: %q must be a relative path inside the workspace", ErrBadPath, p)
	}
	return nil
}

// writeFile replaces the regular file at p inside the workspace dir with
// what data holds, atomically: it fills a temporary file in the same
// directory, syncs it and renames it over p, so a reader sees the old file
// or the whole new one, a failed or oversized write leaves the old content,
// and concurrent writers do not mix their data (the last rename wins).
// Every step goes through os.Root, so neither ".." nor a symlink, including
// one a sandbox command swaps in meanwhile, leads outside the workspace
// (hence not fsutil.WriteFile, which works on host paths). A symlink at p
// is followed inside the workspace and its target replaced.
func writeFile(dir, p string, data io.Reader, mode fs.FileMode) (err error) {
	if err := checkPath(p); err != nil {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("opening workspace: %w", err)
	}
	defer root.Close()
	if d := path.Dir(p); d != "." {
		if err := root.MkdirAll(d, 0o755); err != nil {
			return rootErr(p, err)
		}
	}
	target, err := writeTarget(root, p)
	if err != nil {
		return err
	}
	tmp := path.Join(path.Dir(target), ".tenon-upload-"+tempSuffix())
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return rootErr(p, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			_ = root.Remove(tmp)
		}
	}()
	if _, err := io.Copy(f, data); err != nil {
		return fmt.Errorf("writing %s: %w", p, err)
	}
	if err := f.Chmod(mode); err != nil { // the umask narrowed it at creation
		return fmt.Errorf("writing %s: %w", p, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("writing %s: %w", p, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", p, err)
	}
	if err := root.Rename(tmp, target); err != nil {
		return rootErr(p, err)
	}
	return nil
}

// tempSuffix returns 16 random hex digits: concurrent uploads to one
// directory each get their own temporary file.
func tempSuffix() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// maxLinkHops bounds the symlinks writeTarget follows (the kernel's own
// limit is 40).
const maxLinkHops = 40

// writeTarget returns the workspace path a write to p replaces: p itself,
// or what the symlinks at p lead to. Directories are ErrConflict, other
// non-regular files (FIFOs, devices, sockets) ErrBadRequest.
func writeTarget(root *os.Root, p string) (string, error) {
	for range maxLinkHops {
		st, err := root.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return p, nil
		case err != nil:
			return "", rootErr(p, err)
		case st.IsDir():
			return "", fmt.Errorf("%w: %s is a directory", ErrConflict, p)
		case st.Mode().IsRegular():
			return p, nil
		case st.Mode()&fs.ModeSymlink == 0:
			return "", fmt.Errorf("%w: %s is a %s, not a regular file", ErrBadRequest, p, kind(st.Mode()))
		}
		link, err := root.Readlink(p)
		if err != nil {
			return "", rootErr(p, err)
		}
		next := path.Join(path.Dir(p), link)
		if path.IsAbs(link) || checkPath(next) != nil {
			return "", fmt.Errorf("%w: %s is a symlink leading outside the workspace", ErrBadPath, p)
		}
		p = next
	}
	return "", fmt.Errorf("%w: %s: too many levels of symbolic links", ErrBadRequest, p)
}

// openFile opens the regular file p inside the workspace for reading. It
// opens with O_NONBLOCK, so a FIFO a command left there cannot hold the
// request, and refuses anything but a regular file.
func openFile(dir, p string) (*os.File, error) {
	if err := checkPath(p); err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("opening workspace: %w", err)
	}
	defer root.Close()
	f, err := root.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, rootErr(p, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("reading %s: %w", p, err)
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%w: %s is a %s, not a regular file", ErrBadRequest, p, kind(st.Mode()))
	}
	return f, nil
}

// kind names a file type for error messages.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&fs.ModeNamedPipe != 0:
		return "FIFO"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	}
	return "special file"
}

// rootErr maps os.Root errors: escapes are ErrBadPath, missing files
// ErrNoFile, over-long names ErrBadRequest, directories ErrConflict.
func rootErr(p string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w: %s", ErrNoFile, p)
	case errors.Is(err, syscall.ENAMETOOLONG):
		return fmt.Errorf("%w: %s: a path component is longer than 255 bytes or the path longer than 4096", ErrBadRequest, p)
	case errors.Is(err, syscall.EISDIR):
		return fmt.Errorf("%w: %s is a directory", ErrConflict, p)
	case errors.Is(err, syscall.ENOTDIR):
		return fmt.Errorf("%w: a parent of %s is not a directory", ErrConflict, p)
	case strings.Contains(err.Error(), "escapes") || strings.Contains(err.Error(), "invalid argument"):
		return fmt.Errorf("%w: %s: %v", ErrBadPath, p, err)
	}
	return fmt.Errorf("accessing %s: %w", p, err)
}

// seed fills a new workspace from the request's files and tar.
func seed(dir string, req CreateAgentRequest) error {
	for p, content := range req.Files {
		if err := writeFile(dir, p, strings.NewReader(content), 0o644); err != nil {
			return err
		}
	}
	if len(req.Tar) == 0 {
		return nil
	}
	tr := tar.NewReader(bytes.NewReader(req.Tar))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w: reading tar: %v", ErrBadRequest, err)
		}
		name := strings.TrimPrefix(path.Clean(h.Name), "./")
		if name == "." || name == "" {
			continue
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := checkPath(name); err != nil {
				return err
			}
			root, err := os.OpenRoot(dir)
			if err != nil {
				return err
			}
			err = root.MkdirAll(name, 0o755)
			root.Close()
			if err != nil {
				return rootErr(name, err)
			}
		case tar.TypeReg:
			if err := writeFile(dir, name, tr, fs.FileMode(h.Mode)&0o777|0o600); err != nil {
				return err
			}
		default: // links and devices are skipped: they could point anywhere
		}
	}
}

func (s *Server) handlePutFile(w http.ResponseWriter, r *http.Request) {
	ag, err := s.agentOf(r)
	if err != nil {
		writeError(w, err)
		return
	}
	body, ok := s.cappedBody(w, r)
	if !ok {
		return
	}
	if err := writeFile(ag.workspace, r.PathValue("path"), body, 0o644); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			err = tooLarge(-1, mbe.Limit)
		}
		writeError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) handleGetFile(w http.ResponseWriter, r *http.Request) {
	ag, err := s.agentOf(r)
	if err != nil {
		writeError(w, err)
		return
	}
	f, err := openFile(ag.workspace, r.PathValue("path"))
	if err != nil {
		writeError(w, err)
		return
	}
	defer f.Close()
	w.Header().Set("Content-Type", "application/octet-stream")
	_, _ = io.Copy(w, f)
}
