//go:build linux

package realtools

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/archive"
	"github.com/tenon-dev/tenon/internal/cgroup"
	"github.com/tenon-dev/tenon/internal/cgroup/cgrouptest"
	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/edittool"
	"github.com/tenon-dev/tenon/internal/live"
	"github.com/tenon-dev/tenon/internal/policy"
	"github.com/tenon-dev/tenon/internal/replay"
	"github.com/tenon-dev/tenon/internal/sandbox/process"
	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/units"
)

// TestMain serves the process backend's sandbox init and, since the test
// binary is /usr/local/bin/tenon inside a sandbox, `tenon tool edit`.
func TestMain(m *testing.M) {
	process.MaybeInit()
	edittool.MaybeServe()
	os.Exit(m.Run())
}

// TestLiveSoupsieve replays the soupsieve task on the process backend
// through replay.Run: its edits land in the unpacked repository, its
// pytest runs really run in /testbed (exit 0 or 1: tests ran, passed or
// failed), every action runs once, and nothing is left behind.
func TestLiveSoupsieve(t *testing.T) {
	layout := liveLayout(t)
	sharedInputs(t)
	// The task's commands need Debian's python3 with these (the manifest
	// lists them; .ci/run installs them).
	if out, err := exec.Command("/usr/bin/python3", "-c", "import pytest, bs4, html5lib, lxml").CombinedOutput(); err != nil {
		t.Skipf("the soupsieve task needs python3-pytest, python3-bs4, python3-html5lib, python3-lxml: %v: %s", err, out)
	}
	if _, err := exec.LookPath("timeout"); err != nil {
		t.Skipf("the replay runs commands under coreutils' timeout: %v", err)
	}
	wfs, _, err := Build(sharedRepos, sharedTraces)
	if err != nil {
		t.Fatal(err)
	}
	var wf trajectory.Workflow
	for _, w := range wfs {
		if w.ID == "facelessuser__soupsieve-147" {
			wf = w
		}
	}
	if wf.ID == "" {
		t.Fatal("no soupsieve workflow")
	}
	// A last action checks the edited file against the edits applied on
	// the host to a copy of the repository.
	const edited = "soupsieve/css_match.py"
	sum := editedSum(t, wf, edited)
	wf.Actions = append(wf.Actions, trajectory.Action{Class: "bash", Command: "check", Run: fmt.Sprintf("echo '%s  %s' | sha256sum -c", sum, edited)})

	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)
	name := fmt.Sprintf("tenon-test-realtools-%d", os.Getpid())
	const budget = units.GiB
	dom, err := cgroup.OpenDomain(ctx, layout, name, budget, log)
	if err != nil {
		t.Fatalf("OpenDomain: %v", err)
	}
	domClosed := false
	closeDom := func() {
		if domClosed {
			return
		}
		domClosed = true
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := dom.Close(cctx); err != nil {
			t.Errorf("closing domain: %v", err)
		}
	}
	t.Cleanup(closeDom)
	state := t.TempDir()
	be, err := process.New(process.Config{StateDir: state, CgroupParent: dom.Group().Path(), Layout: layout, Logger: log, DiskMax: -1})
	if err != nil {
		t.Fatalf("process backend: %v", err)
	}
	beClosed := false
	t.Cleanup(func() {
		if !beClosed {
			be.Close()
		}
	})
	p, err := live.Build("eager", policy.Options{Budget: budget}, live.Options{})
	if err != nil {
		t.Fatal(err)
	}
	wsRoot := t.TempDir()
	var events bytes.Buffer
	res, err := replay.Run(ctx, replay.Config{
		Workflows: []trajectory.Workflow{wf}, Backend: be, Policy: p, Budget: budget, Domain: replay.CgroupDomain{Domain: dom},
		TimeScale: 0.01, MaxRetries: -1, ActionTimeout: 3 * time.Minute, SandboxPrefix: name, WorkspaceRoot: wsRoot,
		EventLog: &events, Logger: log,
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Completed != 1 || res.Attempts != 1 || res.Actions != len(wf.Actions) {
		t.Errorf("completed %d, attempts %d, actions %d; want 1, 1, %d", res.Completed, res.Attempts, res.Actions, len(wf.Actions))
	}
	done := actionsDone(t, &events)
	if len(done) != len(wf.Actions) {
		t.Fatalf("%d action_done events, want %d", len(done), len(wf.Actions))
	}
	for i, e := range done {
		a := wf.Actions[i]
		if e.Exit == nil {
			t.Errorf("action %d (%s): no exit code recorded", i, a.Command)
			continue
		}
		exit := *e.Exit
		t.Logf("action %d %-5s exit %3d peak %6.1f MiB %5.2fs  %s", i, a.Class, exit, float64(e.PeakBytes)/float64(units.MiB), e.DurationS, a.Command)
		switch {
		case a.Edit != nil && exit != 0:
			t.Errorf("action %d: the edit of %s exited %d", i, a.Edit.Path, exit)
		case a.Class == "test" && exit != 0 && exit != 1:
			t.Errorf("action %d: %q exited %d, want pytest's 0 or 1 (tests ran)", i, a.Command, exit)
		case a.Command == "check" && exit != 0:
			t.Errorf("the edited %s differs from the edits applied on the host (exit %d)", edited, exit)
		}
	}
	if ents, _ := os.ReadDir(wsRoot); len(ents) != 0 {
		t.Errorf("workspaces left: %v", ents)
	}
	if err := be.Close(); err != nil {
		t.Errorf("closing backend: %v", err)
	}
	beClosed = true
	closeDom()
	if dirs, _ := filepath.Glob(filepath.Join("/sys/fs/cgroup/*", name)); len(dirs) != 0 {
		t.Errorf("cgroups left: %v", dirs)
	}
	if ents, _ := os.ReadDir(filepath.Join(state, "sandboxes")); len(ents) != 0 {
		t.Errorf("sandbox state left: %v", ents)
	}
	if mi, err := os.ReadFile("/proc/self/mountinfo"); err != nil || strings.Contains(string(mi), state) || strings.Contains(string(mi), wsRoot) {
		t.Errorf("mounts left under the state or workspace directories (%v)", err)
	}
}

// editedSum applies wf's edits to a host copy of its repository and
// returns the sha256 of file afterwards.
func editedSum(t *testing.T, wf trajectory.Workflow, file string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ws")
	f, err := os.Open(wf.Workspace.Archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := archive.ExtractTar(context.Background(), f, dir, wf.Workspace.Strip); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range wf.Actions {
		if a.Edit != nil {
			if err := edittool.Apply(dir, *a.Edit); err != nil {
				t.Fatal(err)
			}
		}
	}
	after, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(before, after) {
		t.Fatalf("the task's edits do not change %s", file)
	}
	h := sha256.Sum256(after)
	return hex.EncodeToString(h[:])
}

func actionsDone(t *testing.T, b *bytes.Buffer) []controller.Event {
	t.Helper()
	var out []controller.Event
	sc := bufio.NewScanner(b)
	sc.Buffer(make([]byte, 0, 1<<20), 1<<24)
	for sc.Scan() {
		var e controller.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("event %q: %v", sc.Text(), err)
		}
		if e.Kind == controller.EventActionDone {
			out = append(out, e)
		}
	}
	return out
}

// liveLayout skips unless the test runs as root with the cgroup memory
// and freezer controllers.
func liveLayout(t *testing.T) *cgroup.Layout {
	t.Helper()
	l := cgrouptest.Live(t, "live real-tools test")
	if _, ok := l.Controller(cgroup.Freezer); !ok {
		t.Skip("live real-tools test needs the cgroup freezer controller")
	}
	return l
}
