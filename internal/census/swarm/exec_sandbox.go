package swarm

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/tenon-dev/tenon/internal/cgroup"
	"github.com/tenon-dev/tenon/internal/sandbox"
	"github.com/tenon-dev/tenon/internal/sandbox/process"
)

// goplsSocket is where a sandbox's gopls listens, relative to the
// workspace; the host reaches it through the workspace overlay.
const goplsSocket = ".tenon-gopls.sock"

// sandboxExec runs a sibling as a process-backend sandbox whose workspace
// is the sibling's overlay. gopls runs as a daemon in the sandbox,
// listening on a unix socket in the workspace.
type sandboxExec struct {
	b    *process.Backend
	id   string
	ws   string // the workspace on the host
	conn net.Conn
}

// setupSandbox mounts the sibling's overlay on the host and creates its
// sandbox with the overlay as workspace.
func (s *sibling) setupSandbox(ctx context.Context, b *process.Backend, layout *cgroup.Layout, repo string) error {
	merged, err := s.mountOverlay(repo)
	if err != nil {
		return err
	}
	s.view, s.host, s.tmp = sandbox.WorkspaceMount, merged, "/tmp"
	s.gopls = "/usr/local/bin/gopls" // see linkGopls
	info, err := b.Create(ctx, sandbox.Spec{ID: s.name, Workspace: merged, Labels: map[string]string{"census": "swarm"}})
	if err != nil {
		return fmt.Errorf("creating sandbox: %w", err)
	}
	s.ex = &sandboxExec{b: b, id: s.name, ws: merged}
	g, err := cgroup.Open(layout, info.CgroupPath)
	if err != nil {
		return fmt.Errorf("opening sandbox cgroup: %w", err)
	}
	s.group = g
	dirs, err := layout.Dirs(info.CgroupPath)
	if err != nil {
		return err
	}
	s.cgDir = dirs[cgroup.Memory]
	if wl, err := b.WritableLayer(s.name); err == nil {
		s.extra = append(s.extra, wl)
	}
	return nil
}

// linkGopls puts gopls into the backend's bin directory, which the
// process backend binds read-only at /usr/local/bin in every sandbox: one
// inode for the whole swarm, not mapped through an overlay.
func linkGopls(stateDir, repo string) error {
	src := filepath.Join(repo, ToolsDir, "bin", "gopls")
	dst := filepath.Join(stateDir, "bin", "gopls")
	if err := os.Link(src, dst); err == nil {
		return nil
	}
	st, err := os.Stat(src)
	if err != nil {
		return err
	}
	return copyFile(src, dst, st.Mode().Perm())
}

func (x *sandboxExec) run(ctx context.Context, env, argv []string) error {
	return x.exec(ctx, env, argv, false)
}

// exec runs argv in the sandbox; background keeps what it leaves running
// (the sandbox kills an action's leftover processes otherwise).
func (x *sandboxExec) exec(ctx context.Context, env, argv []string, background bool) error {
	r, err := x.b.Exec(ctx, x.id, sandbox.ExecRequest{Argv: argv, Cwd: sandbox.WorkspaceMount, Env: env, OutputLimit: 4 << 10,
		Background: background})
	if err != nil {
		return fmt.Errorf("%v: %w", argv, err)
	}
	if r.ExitCode != 0 {
		return &ExitError{Argv: argv, Code: r.ExitCode}
	}
	return nil
}

// serve starts gopls as a daemon of the sandbox and connects to its
// socket through the host side of the workspace overlay.
func (x *sandboxExec) serve(ctx context.Context, env []string, gopls string) (io.Reader, io.Writer, error) {
	sock := filepath.Join(sandbox.WorkspaceMount, goplsSocket)
	sh := fmt.Sprintf(`mkdir -p "$TMPDIR" && rm -f %s && (nohup %s serve -listen='unix;%s' >/tmp/gopls.log 2>&1 &)`, sock, gopls, sock)
	if err := x.exec(ctx, env, []string{"/bin/sh", "-c", sh}, true); err != nil {
		return nil, nil, err
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.Dial("unix", filepath.Join(x.ws, goplsSocket))
		if err == nil {
			x.conn = c
			return c, c, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil, nil, fmt.Errorf("connecting to gopls in sandbox %s: %w", x.id, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (x *sandboxExec) stop(ctx context.Context) error {
	if x.conn != nil {
		x.conn.Close()
	}
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := x.b.Destroy(dctx, x.id); err != nil {
		return fmt.Errorf("destroying sandbox: %w", err)
	}
	return nil
}
