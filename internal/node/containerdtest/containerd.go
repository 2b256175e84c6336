package containerdtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	cri "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/tenon-dev/tenon/internal/debfetch"
)

// Daemon is a containerd the test started.
type Daemon struct {
	Dir       string // everything of this daemon: root, state, sockets, config, log
	Socket    string // containerd's gRPC (and CRI) socket
	NRISocket string // where NRI plugins connect
	// CgroupParent is a cgroup (cgroupfs driver) of this daemon's own for
	// the test's pods, e.g. PodConfig(..., d.CgroupParent+"/pod1", ...);
	// removed on every hierarchy at cleanup.
	CgroupParent string
	Bin          Binaries
	Runtime      cri.RuntimeServiceClient
	Images       cri.ImageServiceClient

	cmd  *exec.Cmd
	conn *grpc.ClientConn
	// madeShimDir says Start created shimDir (the shims' socket
	// directory, fixed in containerd 1.7), so cleanup removes it if empty.
	madeShimDir bool
}

// shimDir is where containerd 1.7's shims put their sockets, whatever the
// daemon's state directory.
const shimDir = "/run/containerd"

// requireEnv set to "require" turns Start's skips into failures (CI).
const requireEnv = "TENON_CONTAINERD"

// skip skips t, or fails it when the environment requires the daemon.
func skip(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv(requireEnv) == "require" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

// Start fetches the binaries, starts containerd with pauseImage as the
// pods' sandbox image, and returns it with a CRI client; cleanup stops
// everything it ran.
func Start(t *testing.T, pauseImage string) *Daemon {
	t.Helper()
	if os.Geteuid() != 0 {
		skip(t, "containerd needs root")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin, err := Fetch(ctx)
	if ua := (*debfetch.UnavailableError)(nil); errors.As(err, &ua) {
		skip(t, "containerd and runc binaries not available: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	// Short: unix socket paths must stay under 108 bytes.
	dir, err := os.MkdirTemp("", "ctrd-")
	if err != nil {
		t.Fatal(err)
	}
	d := &Daemon{Dir: dir, Socket: filepath.Join(dir, "c.sock"), NRISocket: filepath.Join(dir, "nri.sock"), Bin: bin,
		CgroupParent: "/" + filepath.Base(dir)}
	_, err = os.Stat(shimDir)
	d.madeShimDir = os.IsNotExist(err)
	t.Cleanup(func() { d.stop(t) })
	cfg := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(cfg, []byte(d.config(pauseImage)), 0o600); err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(dir, "containerd.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	d.cmd = exec.Command(bin.Containerd, "--config", cfg)
	d.cmd.Stdout, d.cmd.Stderr = logf, logf
	// The shim is looked up on PATH: ours first (the host may have another).
	d.cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bin.Shim)+":"+filepath.Dir(bin.Runc)+":"+os.Getenv("PATH"))
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := d.cmd.Start(); err != nil {
		t.Fatalf("starting containerd: %v", err)
	}
	if err := d.connect(ctx); err != nil {
		t.Fatalf("containerd did not come up: %v\n%s", err, d.Log())
	}
	return d
}

// config is containerd's configuration: everything under d.Dir, the CRI
// plugin with runc through the cgroupfs driver, NRI on.
func (d *Daemon) config(pause string) string {
	p := func(s string) string { return filepath.Join(d.Dir, s) }
	return fmt.Sprintf(`version = 2
root = %q
state = %q
[grpc]
  address = %q
[ttrpc]
  address = %q
[debug]
  address = %q
[plugins."io.containerd.internal.v1.opt"]
  path = %q
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %q
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = %q
        Root = %q
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = %q
    conf_dir = %q
[plugins."io.containerd.nri.v1.nri"]
  disable = false
  disable_connections = false
  socket_path = %q
  plugin_path = %q
  plugin_config_path = %q
  plugin_registration_timeout = "5s"
  plugin_request_timeout = "2s"
`, p("root"), p("state"), d.Socket, d.Socket+".ttrpc", p("debug.sock"), p("opt"), pause, d.Bin.Runc, p("runc"),
		p("cni/bin"), p("cni/conf"), d.NRISocket, p("nri/plugins"), p("nri/conf.d"))
}

// connect waits for the CRI to answer.
func (d *Daemon) connect(ctx context.Context) error {
	conn, err := grpc.NewClient("unix://"+d.Socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	d.conn = conn
	d.Runtime, d.Images = cri.NewRuntimeServiceClient(conn), cri.NewImageServiceClient(conn)
	for {
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		_, err := d.Runtime.Version(cctx, &cri.VersionRequest{})
		cancel()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Log is containerd's log so far.
func (d *Daemon) Log() string {
	b, _ := os.ReadFile(filepath.Join(d.Dir, "containerd.log"))
	return string(b)
}

// Import loads a docker-archive tarball into the CRI's image namespace.
func (d *Daemon) Import(t *testing.T, archive string) {
	t.Helper()
	out, err := exec.Command(d.Bin.Ctr, "--address", d.Socket, "--namespace", "k8s.io", "images", "import", archive).CombinedOutput()
	if err != nil {
		t.Fatalf("ctr images import: %v: %s", err, out)
	}
}

// stop removes every pod, stops containerd and whatever shim of it is
// left, unmounts what is mounted under its directory and removes it.
func (d *Daemon) stop(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if d.Runtime != nil {
		if pods, err := d.Runtime.ListPodSandbox(ctx, &cri.ListPodSandboxRequest{}); err == nil {
			for _, p := range pods.Items {
				if _, err := d.Runtime.StopPodSandbox(ctx, &cri.StopPodSandboxRequest{PodSandboxId: p.Id}); err != nil {
					t.Errorf("stopping pod %s: %v", p.Metadata.GetName(), err)
				}
				if _, err := d.Runtime.RemovePodSandbox(ctx, &cri.RemovePodSandboxRequest{PodSandboxId: p.Id}); err != nil {
					t.Errorf("removing pod %s: %v", p.Metadata.GetName(), err)
				}
			}
		}
	}
	if d.conn != nil {
		d.conn.Close()
	}
	if d.cmd != nil && d.cmd.Process != nil {
		_ = d.cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = d.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = d.cmd.Process.Kill()
			<-done
		}
	}
	for _, pid := range shims(d.Socket) {
		t.Logf("killing shim %d left behind", pid)
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	unmountUnder(t, d.Dir)
	RemoveCgroups(t, d.CgroupParent)
	if d.madeShimDir {
		_ = os.Remove(filepath.Join(shimDir, "s")) // only when empty: another daemon may use it
		_ = os.Remove(shimDir)
	}
	if err := os.RemoveAll(d.Dir); err != nil {
		t.Errorf("removing containerd's directory: %v", err)
	}
}

// shims lists the pids of shims whose command line names address (the
// daemon they belong to).
func shims(address string) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		var pid int
		if _, err := fmt.Sscan(e.Name(), &pid); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(string(b), "\x00")
		if len(args) > 0 && strings.HasSuffix(args[0], "containerd-shim-runc-v2") && strings.Contains(string(b), address) {
			out = append(out, pid)
		}
	}
	return out
}

// unmountUnder detaches every mount below dir, deepest first.
func unmountUnder(t *testing.T, dir string) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return
	}
	var points []string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && strings.HasPrefix(f[4], dir+"/") {
			points = append(points, f[4])
		}
	}
	for i := len(points) - 1; i >= 0; i-- {
		t.Logf("unmounting %s left behind", points[i])
		if err := syscall.Unmount(points[i], syscall.MNT_DETACH); err != nil {
			t.Errorf("unmounting %s: %v", points[i], err)
		}
	}
}

// RemoveCgroups removes the cgroup parent and everything below it on
// every hierarchy, deepest first (the runtime removed the containers'
// own; what is left is empty). runc makes a container's path on every
// hierarchy, also those tenon does not use (blkio, devices, ...).
func RemoveCgroups(t *testing.T, parent string) {
	roots, _ := filepath.Glob("/sys/fs/cgroup/*" + parent)
	for _, root := range roots {
		var dirs []string
		_ = filepath.WalkDir(root, func(p string, e os.DirEntry, err error) error {
			if err == nil && e.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		for i := len(dirs) - 1; i >= 0; i-- {
			if err := syscall.Rmdir(dirs[i]); err != nil {
				t.Errorf("removing cgroup %s: %v", dirs[i], err)
			}
		}
	}
}
