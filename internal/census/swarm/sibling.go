package swarm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/tenon-dev/tenon/internal/cgroup"
)

// ExitError is a step that ran and exited non-zero.
type ExitError struct {
	Argv []string
	Code int
}

func (e *ExitError) Error() string { return fmt.Sprintf("%v: exit status %d", e.Argv, e.Code) }

// sibling is one member of the swarm.
type sibling struct {
	index  int
	name   string
	config Config
	dir    string // private state on the host: upper/work dirs, copy, tmp, logs
	view   string // the repository as the sibling's processes see it
	host   string // the repository as the host sees it (for edits)
	tmp    string // the sibling's temporary directory as its processes see it
	group  cgroup.Group
	cgDir  string   // memory cgroup directory (the census lists its processes)
	extra  []string // further private directories (a copied repo, a sandbox's root file system)
	gopls  string   // the gopls binary as the sibling sees it
	mount  string   // host overlay mount point to unmount ("" for none)
	ex     executor
	lsp    *lspSession
	log    *slog.Logger
}

// executor runs the sibling's processes.
type executor interface {
	// run runs argv in the repository view; a non-zero exit is an *ExitError.
	run(ctx context.Context, env, argv []string) error
	// serve starts the language server and returns its stream.
	serve(ctx context.Context, env []string, gopls string) (io.Reader, io.Writer, error)
	// stop kills every process of the sibling.
	stop(ctx context.Context) error
}

// private returns the directories only this sibling writes. The overlay
// mount point is not one of them: its files are the shared lower's (or the
// upper's), and scanning them through the overlay would count the lower's
// page-cache pages a second time under the overlay's inode.
func (s *sibling) private() []string {
	return append([]string{filepath.Join(s.dir, "upper"), filepath.Join(s.dir, "tmp")}, s.extra...)
}

func (s *sibling) env() []string { return goEnv(s.view, s.tmp) }

// mountOverlay mounts repo (lower) with the sibling's upper at dir/merged.
func (s *sibling) mountOverlay(repo string) (string, error) {
	merged := filepath.Join(s.dir, "merged")
	if err := os.MkdirAll(merged, 0o755); err != nil {
		return "", err
	}
	if err := syscall.Mount("overlay", merged, "overlay", 0, s.overlayOpts(repo)); err != nil {
		return "", fmt.Errorf("mounting overlay at %s: %w", merged, err)
	}
	s.mount = merged
	return merged, nil
}

func (s *sibling) overlayOpts(repo string) string {
	return fmt.Sprintf("lowerdir=%s,upperdir=%s,workdir=%s", repo, filepath.Join(s.dir, "upper"), filepath.Join(s.dir, "work"))
}

// startGopls starts the language server and waits until it answered a
// first request on file rel (the workspace is loaded).
func (s *sibling) startGopls(ctx context.Context, rel string) error {
	r, w, err := s.ex.serve(ctx, s.env(), s.gopls)
	if err != nil {
		return fmt.Errorf("starting gopls: %w", err)
	}
	sess, err := startSession(ctx, r, w, s.view)
	if err != nil {
		return err
	}
	s.lsp = sess
	// The first answer, even an error response, comes after the workspace
	// is loaded.
	var re *ResponseError
	if err := s.touch(ctx, rel, ""); err != nil && !errors.As(err, &re) {
		return err
	}
	return nil
}

// touch appends suffix to rel (when not empty), pushes the file's text to
// the server and queries it.
func (s *sibling) touch(ctx context.Context, rel, suffix string) error {
	p := filepath.Join(s.host, rel)
	if suffix != "" {
		f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return fmt.Errorf("editing %s: %w", rel, err)
		}
		_, werr := io.WriteString(f, suffix)
		if err := errors.Join(werr, f.Close()); err != nil {
			return fmt.Errorf("editing %s: %w", rel, err)
		}
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return fmt.Errorf("reading %s: %w", rel, err)
	}
	text := string(b)
	if err := s.lsp.Open(rel, text); err != nil {
		return err
	}
	return s.lsp.Query(ctx, rel, funcPosition(text))
}

func (s *sibling) run(ctx context.Context, argv ...string) error { return s.ex.run(ctx, s.env(), argv) }

// teardown stops every process of the sibling, unmounts and deletes its
// cgroup. Its directory is removed by the caller with the run's tree.
func (s *sibling) teardown(ctx context.Context) error {
	var errs []error
	if s.lsp != nil {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_ = s.lsp.Close(cctx)
		cancel()
	}
	if s.ex != nil {
		if err := s.ex.stop(ctx); err != nil {
			errs = append(errs, fmt.Errorf("stopping %s: %w", s.name, err))
		}
	}
	if s.mount != "" {
		if err := syscall.Unmount(s.mount, syscall.MNT_DETACH); err != nil {
			errs = append(errs, fmt.Errorf("unmounting %s: %w", s.mount, err))
		}
	}
	return errors.Join(errs...)
}

// exitErr converts an exec error into an *ExitError where it is one.
func exitErr(argv []string, err error) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() >= 0 {
		return &ExitError{Argv: argv, Code: ee.ExitCode()}
	}
	if err != nil {
		return fmt.Errorf("%v: %w", argv, err)
	}
	return nil
}

func itoa(i int) string { return strconv.Itoa(i) }
