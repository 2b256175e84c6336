package swarm

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/tenon-dev/tenon/internal/cgroup"
)

// wrapper puts the shell into the sibling's cgroups ($1, $2: cgroup.procs
// files), changes to $3 and execs the rest, so every process of the
// sibling starts inside its cgroups.
const wrapper = `echo $$ > "$1" && echo $$ > "$2" && cd "$3" && shift 3 && exec "$@"`

// hostExec runs a sibling's processes on the host, in its own cgroup
// (memory and freezer) and, for ns-overlay, in the mount namespace of a
// holder process.
type hostExec struct {
	s      *sibling
	group  cgroup.Group
	procs  [2]string
	holder *exec.Cmd
	gopls  *exec.Cmd
	logDir string
}

// setupHost creates the sibling's cgroup and its view of repo for the
// host-overlay, ns-overlay and copied configurations.
func (s *sibling) setupHost(ctx context.Context, layout *cgroup.Layout, cgPath, repo, nsMount string) error {
	g, err := cgroup.Create(layout, cgPath)
	if err != nil {
		return fmt.Errorf("creating sibling cgroup: %w", err)
	}
	s.group = g
	dirs, err := layout.Dirs(cgPath)
	if err != nil {
		return err
	}
	h := &hostExec{s: s, group: g, logDir: s.dir,
		procs: [2]string{filepath.Join(dirs[cgroup.Memory], "cgroup.procs"), filepath.Join(dirs[cgroup.Freezer], "cgroup.procs")}}
	s.ex, s.cgDir, s.tmp = h, dirs[cgroup.Memory], filepath.Join(s.dir, "tmp")
	// gopls runs from the shared lower by its host path (visible in a
	// private mount namespace too), never through an overlay: the census
	// keys file pages by inode, and a mapping through an overlay has the
	// overlay's inode.
	s.gopls = filepath.Join(repo, ToolsDir, "bin", "gopls")
	switch s.config {
	case HostOverlay:
		merged, err := s.mountOverlay(repo)
		if err != nil {
			return err
		}
		s.view, s.host = merged, merged
	case Copied:
		s.view = filepath.Join(s.dir, "repo")
		if err := copyRepo(repo, s.view); err != nil {
			return fmt.Errorf("copying repository: %w", err)
		}
		s.host = s.view
		s.extra = append(s.extra, s.view)
	case NSOverlay:
		s.view = s.dir // the holder starts here
		script := fmt.Sprintf(`mount -t overlay overlay -o %s %s && echo ready && exec sleep infinity`, s.overlayOpts(repo), nsMount)
		cmd := h.command(ctx, nil, []string{"unshare", "--mount", "--propagation", "private", "/bin/sh", "-c", script})
		out, err := cmd.StdoutPipe()
		if err != nil {
			return err
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("starting namespace holder: %w", err)
		}
		h.holder = cmd
		line, _ := bufio.NewReader(out).ReadString('\n')
		if strings.TrimSpace(line) != "ready" {
			return fmt.Errorf("mounting overlay in a private mount namespace failed")
		}
		s.view = nsMount
		s.host = filepath.Join("/proc", itoa(cmd.Process.Pid), "root", nsMount)
	}
	return nil
}

// command returns argv run in the sibling: in its cgroups, in its
// repository view, in its mount namespace.
func (h *hostExec) command(ctx context.Context, env, argv []string) *exec.Cmd {
	args := append([]string{"-c", wrapper, "sh", h.procs[0], h.procs[1], h.s.view}, argv...)
	name := "/bin/sh"
	if h.holder != nil {
		args = append([]string{"--target", itoa(h.holder.Process.Pid), "--mount", "--", "/bin/sh"}, args...)
		name = "nsenter"
	}
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

func (h *hostExec) run(ctx context.Context, env, argv []string) error {
	if err := os.MkdirAll(filepath.Join(h.s.dir, "tmp"), 0o755); err != nil {
		return err
	}
	cmd := h.command(ctx, env, argv)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	return exitErr(argv, cmd.Run())
}

func (h *hostExec) serve(ctx context.Context, env []string, gopls string) (io.Reader, io.Writer, error) {
	if err := os.MkdirAll(filepath.Join(h.s.dir, "tmp"), 0o755); err != nil {
		return nil, nil, err
	}
	cmd := h.command(context.WithoutCancel(ctx), env, []string{gopls})
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	logf, err := os.Create(filepath.Join(h.logDir, "gopls.log"))
	if err != nil {
		return nil, nil, err
	}
	defer logf.Close()
	cmd.Stderr = logf
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	h.gopls = cmd
	return out, in, nil
}

func (h *hostExec) stop(ctx context.Context) error {
	var errs []error
	kctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := h.group.Thaw(kctx); err != nil && !errors.Is(err, cgroup.ErrNoHierarchy) {
		errs = append(errs, err)
	}
	if err := h.group.KillAll(kctx); err != nil {
		errs = append(errs, err)
	}
	for _, c := range []*exec.Cmd{h.gopls, h.holder} {
		if c != nil && c.Process != nil {
			_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
			_ = c.Wait()
		}
	}
	if err := h.group.Delete(); err != nil {
		errs = append(errs, fmt.Errorf("deleting cgroup: %w", err))
	}
	return errors.Join(errs...)
}
