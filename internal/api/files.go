package api

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// checkPath accepts a relative, local, slash-separated workspace path.
func checkPath(p string) error {
	if p == "" || strings.ContainsRune(p, 0) || strings.HasPrefix(p, "/") || !filepath.IsLocal(filepath.FromSlash(p)) {
		return fmt.Errorf("%w: %q must be a relative path inside the workspace", ErrBadPath, p)
	}
	return nil
}

// writeFile writes data at p inside the workspace dir through os.Root, so
// neither ".." nor a symlink can lead outside it.
func writeFile(dir, p string, data io.Reader, mode fs.FileMode) error {
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
	f, err := root.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return rootErr(p, err)
	}
	if _, err := io.Copy(f, data); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", p, err)
	}
	return f.Close()
}

// openFile opens p inside the workspace for reading.
func openFile(dir, p string) (*os.File, error) {
	if err := checkPath(p); err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("opening workspace: %w", err)
	}
	defer root.Close()
	f, err := root.Open(p)
	if err != nil {
		return nil, rootErr(p, err)
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%w: %s is not a regular file", ErrBadRequest, p)
	}
	return f, nil
}

// rootErr maps os.Root errors: escapes are ErrBadPath, missing files ErrFileNotFound.
func rootErr(p string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w: %s", errFileNotFound, p)
	case strings.Contains(err.Error(), "escapes") || strings.Contains(err.Error(), "invalid argument"):
		return fmt.Errorf("%w: %s: %v", ErrBadPath, p, err)
	}
	return fmt.Errorf("accessing %s: %w", p, err)
}

// errFileNotFound means the workspace file does not exist (404).
var errFileNotFound = fmt.Errorf("%w: file not found", ErrNotFound)

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
	body := http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes)
	if err := writeFile(ag.workspace, r.PathValue("path"), body, 0o644); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeError(w, mbe)
			return
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
