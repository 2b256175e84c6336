package docker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/client"

	"github.com/tenon-dev/tenon/internal/cgroup"
	"github.com/tenon-dev/tenon/internal/image"
	"github.com/tenon-dev/tenon/internal/sandbox"
)

func ctxT(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return c
}

// mustCreate creates a sandbox with a fresh workspace.
func mustCreate(t testing.TB, b *Backend, id string, labels map[string]string) sandbox.Info {
	t.Helper()
	info, err := b.Create(ctxT(t), sandbox.Spec{ID: id, Workspace: filepath.Join(t.TempDir(), "ws"), Labels: labels})
	if err != nil {
		t.Fatalf("Create(%s): %v", id, err)
	}
	return info
}

func mustSh(t testing.TB, b *Backend, id, cmd string) string {
	t.Helper()
	r, err := b.Exec(ctxT(t), id, sandbox.ExecRequest{Shell: cmd, Timeout: 30 * time.Second})
	if err != nil || r.ExitCode != 0 {
		t.Fatalf("%q: %+v %v", cmd, r, err)
	}
	return string(r.Stdout)
}

func TestCreateExecDestroy(t *testing.T) {
	b := newBackend(t, 4<<30)
	info := mustCreate(t, b, "ced", map[string]string{"agent": "a1"})
	if info.InitPid <= 0 || info.Labels["agent"] != "a1" || !strings.HasPrefix(info.CgroupPath, b.Domain()+"/") {
		t.Fatalf("Info = %+v: want an init pid, the label and a cgroup under %s", info, b.Domain())
	}
	if _, err := os.Stat(filepath.Join("/sys/fs/cgroup/memory", info.CgroupPath)); err != nil {
		t.Fatalf("container memory cgroup: %v", err)
	}
	bx, _ := b.lookup("ced")
	in, err := b.cli.ContainerInspect(ctxT(t), bx.cid)
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{LabelSandbox: "1", LabelDomain: b.Domain(), LabelID: "ced", labelUser + "agent": "a1"} {
		if got := in.Config.Labels[k]; got != want {
			t.Errorf("label %s = %q, want %q", k, got, want)
		}
	}
	if in.HostConfig.NetworkMode != "none" {
		t.Errorf("network mode %q, want none", in.HostConfig.NetworkMode)
	}
	if !slices.Equal(in.HostConfig.CapDrop, []string{"ALL"}) || len(in.HostConfig.CapAdd) != len(sandbox.Capabilities()) ||
		!slices.Contains(in.HostConfig.SecurityOpt, "no-new-privileges") {
		t.Errorf("CapDrop %v CapAdd %v SecurityOpt %v, want ALL dropped, sandbox.Capabilities added, no-new-privileges",
			in.HostConfig.CapDrop, in.HostConfig.CapAdd, in.HostConfig.SecurityOpt)
	}
	// An action's root has the process backend's capabilities, no more,
	// and no_new_privs (setuid binaries do not raise it).
	status := map[string]string{}
	for _, l := range strings.Split(mustSh(t, b, "ced", "grep -E '^(CapEff|CapBnd|NoNewPrivs):' /proc/self/status"), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok {
			status[k] = strings.TrimSpace(v)
		}
	}
	if status["NoNewPrivs"] != "1" {
		t.Errorf("NoNewPrivs = %q, want 1", status["NoNewPrivs"])
	}
	const capDacOverride, capNetRaw, capMknod, capAuditWrite, capSetfcap = 1, 13, 27, 29, 31
	for _, k := range []string{"CapEff", "CapBnd"} {
		set, err := strconv.ParseUint(status[k], 16, 64)
		if err != nil {
			t.Fatalf("%s %q: %v", k, status[k], err)
		}
		for _, c := range []uint{capDacOverride, capNetRaw, capMknod, capAuditWrite, capSetfcap} {
			if set&(1<<c) != 0 {
				t.Errorf("%s %#x has capability %d", k, set, c)
			}
		}
		if bits.OnesCount64(set) != len(sandbox.Capabilities()) {
			t.Errorf("%s %#x holds %d capabilities, want the %d of sandbox.Capabilities", k, set, bits.OnesCount64(set), len(sandbox.Capabilities()))
		}
	}
	tests := []struct {
		name, cmd, want string
	}{
		{"tenon binary mounted", "test -s " + image.TenonPath + " && echo ok", "ok\n"},
		{"tenon binary read-only", "touch " + image.TenonPath + " 2>/dev/null || echo ro", "ro\n"},
		{"python3", `python3 -c 'print(6*7)'`, "42\n"},
		{"root writable", "mkdir -p /newdir && echo x > /newdir/f && cat /newdir/f", "x\n"},
	}
	for _, tt := range tests {
		if got := mustSh(t, b, "ced", tt.cmd); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
	if err := b.Destroy(ctxT(t), "ced"); err != nil {
		t.Fatalf("Destroy: %v", err)
	}
	if _, err := b.cli.ContainerInspect(ctxT(t), bx.cid); !client.IsErrNotFound(err) {
		t.Fatalf("container after Destroy: %v, want not found", err)
	}
}

func TestPauseFreezesCgroup(t *testing.T) {
	b := newBackend(t, 4<<30)
	info := mustCreate(t, b, "pause", nil)
	state := func() string {
		s, err := os.ReadFile(filepath.Join("/sys/fs/cgroup/freezer", info.CgroupPath, "freezer.state"))
		if err != nil {
			t.Fatalf("freezer state: %v", err)
		}
		return strings.TrimSpace(string(s))
	}
	if err := b.Pause(ctxT(t), "pause"); err != nil {
		t.Fatalf("Pause: %v", err)
	}
	if got := state(); got != "FROZEN" {
		t.Fatalf("freezer.state after Pause = %s, want FROZEN", got)
	}
	if err := b.Pause(ctxT(t), "pause"); err != nil {
		t.Fatalf("second Pause: %v", err)
	}
	// An action started in a paused sandbox waits for the resume (the
	// gate's denial), as in a frozen process-backend sandbox; the engine
	// itself refuses to exec in a paused container.
	short, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := b.Exec(short, "pause", sandbox.ExecRequest{Shell: "true"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Exec while paused until the context ends: %v, want the context's error", err)
	}
	type result struct {
		out string
		err error
	}
	done := make(chan result, 1)
	go func() {
		r, err := b.Exec(ctxT(t), "pause", sandbox.ExecRequest{Shell: "echo ran"})
		done <- result{string(r.Stdout), err}
	}()
	select {
	case r := <-done:
		t.Fatalf("Exec returned while paused: %+v", r)
	case <-time.After(300 * time.Millisecond):
	}
	if err := b.Resume(ctxT(t), "pause"); err != nil {
		t.Fatalf("Resume: %v", err)
	}
	if r := <-done; r.err != nil || r.out != "ran\n" {
		t.Fatalf("Exec held by the pause: %+v, want it to run after Resume", r)
	}
	if got := state(); got != "THAWED" {
		t.Fatalf("freezer.state after Resume = %s, want THAWED", got)
	}
	mustSh(t, b, "pause", "true")
}

func TestOOMUnderDomainLimit(t *testing.T) {
	b := newBackend(t, 96<<20)
	mustCreate(t, b, "oom", nil)
	r, err := b.Exec(ctxT(t), "oom", sandbox.ExecRequest{
		Argv:    []string{"python3", "-c", "b = bytearray(400 << 20); print(len(b))"},
		Timeout: 30 * time.Second,
	})
	if err != nil {
		t.Fatalf("Exec: %v", err)
	}
	if !r.OOMKilled || r.ExitCode != -1 || r.TimedOut {
		t.Fatalf("result %+v: want OOMKilled, exit -1", r)
	}
	if r.PeakMemory < 64<<20 {
		t.Errorf("peak %d, want near the 96 MiB budget", r.PeakMemory)
	}
	// The sandbox survives (only the action was killed) and the next action is clean.
	r2, err := b.Exec(ctxT(t), "oom", sandbox.ExecRequest{Shell: "echo fine"})
	if err != nil || r2.OOMKilled || string(r2.Stdout) != "fine\n" {
		t.Fatalf("next action: %+v %v", r2, err)
	}
	st, err := b.Stats(ctxT(t), "oom")
	if err != nil || st.OOMKills < 1 {
		t.Fatalf("Stats %+v %v: want OOMKills >= 1", st, err)
	}
}

func TestKilledBehindBack(t *testing.T) {
	b := newBackend(t, 4<<30)
	tests := []struct {
		name string
		kill func(cli *client.Client, cid string) error
	}{
		{"docker kill", func(cli *client.Client, cid string) error {
			return cli.ContainerKill(context.Background(), cid, "KILL")
		}},
		{"docker rm -f", func(cli *client.Client, cid string) error {
			return cli.ContainerRemove(context.Background(), cid, container.RemoveOptions{Force: true})
		}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := fmt.Sprintf("killed-%d", i)
			mustCreate(t, b, id, nil)
			bx, _ := b.lookup(id)
			if err := tt.kill(b.cli.(*client.Client), bx.cid); err != nil {
				t.Fatal(err)
			}
			if _, err := b.Exec(ctxT(t), id, sandbox.ExecRequest{Shell: "echo hi"}); !errors.Is(err, sandbox.ErrSandboxDead) {
				t.Errorf("Exec: %v, want ErrSandboxDead", err)
			}
			if _, err := b.Stats(ctxT(t), id); !errors.Is(err, sandbox.ErrSandboxDead) {
				t.Errorf("Stats: %v, want ErrSandboxDead", err)
			}
			if err := b.Destroy(ctxT(t), id); err != nil {
				t.Errorf("Destroy of a dead sandbox: %v", err)
			}
		})
	}
}

func TestRestoreLayer(t *testing.T) {
	b := newBackend(t, 4<<30)
	mustCreate(t, b, "src", nil)
	mustSh(t, b, "src", "mkdir -p /opt/tool && echo v1 > /opt/tool/conf && echo r > /root/.hist && ln -s /opt/tool/conf /root/link")
	dir, err := b.WritableLayer("src")
	if err != nil {
		t.Fatalf("WritableLayer: %v", err)
	}
	var buf bytes.Buffer
	if _, err := ArchiveLayer(dir, &buf); err != nil {
		t.Fatalf("ArchiveLayer: %v", err)
	}
	mustCreate(t, b, "dst", nil)
	if err := b.RestoreLayer(ctxT(t), "dst", &buf); err != nil {
		t.Fatalf("RestoreLayer: %v", err)
	}
	if got := mustSh(t, b, "dst", "cat /opt/tool/conf /root/.hist /root/link"); got != "v1\nr\nv1\n" {
		t.Fatalf("restored files read %q, want %q", got, "v1\nr\nv1\n")
	}
}

func TestRemoveStale(t *testing.T) {
	b := newBackend(t, 4<<30)
	mustCreate(t, b, "stale-1", nil)
	mustCreate(t, b, "stale-2", nil)
	// A second backend of the same domain (a restarted tenon) cannot reuse the name.
	b2, err := New(ctxT(t), b.cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close()
	if _, err := b2.Create(ctxT(t), sandbox.Spec{ID: "stale-1"}); !errors.Is(err, sandbox.ErrExists) || !strings.Contains(err.Error(), "RemoveStale") {
		t.Errorf("Create over a stale container: %v, want ErrExists naming RemoveStale", err)
	}
	n, err := RemoveStale(ctxT(t), b.cli, b.Domain())
	if err != nil || n != 2 {
		t.Fatalf("RemoveStale = %d, %v; want 2", n, err)
	}
	if ids, err := ListSandboxes(ctxT(t), b.cli, b.Domain()); err != nil || len(ids) != 0 {
		t.Fatalf("left: %v %v", ids, err)
	}
}

func TestMissingImage(t *testing.T) {
	cli := live(t)
	_, err := New(ctxT(t), Config{Client: cli, Image: "tenon-test-docker-no-such-image:latest"})
	if !errors.Is(err, image.ErrNotFound) || !strings.Contains(err.Error(), "tenon image build --docker") {
		t.Fatalf("New with a missing image: %v, want ErrNotFound naming 'tenon image build --docker'", err)
	}
}

func TestBackgroundHoldsOutput(t *testing.T) {
	b := newBackend(t, 4<<30)
	mustCreate(t, b, "bg", nil)
	start := time.Now()
	r, err := b.Exec(ctxT(t), "bg", sandbox.ExecRequest{Shell: "sleep 30 & echo started", Timeout: 20 * time.Second})
	if err != nil || r.ExitCode != 0 || string(r.Stdout) != "started\n" || r.TimedOut {
		t.Fatalf("Exec: %+v %v", r, err)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("an action whose background child holds stdout took %v, want its own run time plus %v", el, holdGrace)
	}
}

// TestPauseRacingExec pauses and resumes a sandbox over and over while
// actions start in it, as the gate does under pressure: every action
// completes once the sandbox is resumed and dockerd keeps answering (an
// engine pause racing an exec's start used to hang the daemon).
func TestPauseRacingExec(t *testing.T) {
	b := newBackend(t, 4<<30)
	b.cfg.FreezeTimeout = 250 * time.Millisecond
	mustCreate(t, b, "race", nil)
	stop := make(chan struct{})
	toggled := make(chan int)
	go func() {
		n := 0 // successful pauses
		defer func() { toggled <- n }()
		for {
			select {
			case <-stop:
				if err := b.Resume(context.Background(), "race"); err != nil {
					t.Errorf("final Resume: %v", err)
				}
				return
			default:
			}
			// A task runc is moving into the container may keep the freezer
			// from settling: Pause then times out and thaws back, which
			// the gate tolerates (the sandbox just runs on).
			err := b.Pause(context.Background(), "race")
			if err != nil && !errors.Is(err, cgroup.ErrFreezeTimeout) {
				t.Errorf("Pause: %v", err)
			}
			if err == nil {
				n++
			}
			time.Sleep(time.Duration(n%7) * time.Millisecond)
			if err := b.Resume(context.Background(), "race"); err != nil {
				t.Errorf("Resume: %v", err)
			}
			time.Sleep(time.Duration(n%5) * time.Millisecond)
		}
	}()
	for i := range 12 {
		r, err := b.Exec(ctxT(t), "race", sandbox.ExecRequest{Shell: fmt.Sprintf("echo %d", i), Timeout: 30 * time.Second})
		if err != nil || r.ExitCode != 0 || string(r.Stdout) != fmt.Sprintf("%d\n", i) {
			t.Errorf("action %d: %+v %v", i, r, err)
		}
	}
	close(stop)
	if n := <-toggled; n == 0 {
		t.Errorf("the sandbox was never paused during the actions")
	}
	if err := Ping(context.Background(), b.cli); err != nil {
		t.Fatalf("dockerd after the race: %v", err)
	}
}
