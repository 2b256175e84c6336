package app

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/cgroup"
	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/imagestore"
	"github.com/tenon-dev/tenon/internal/imagestore/imagetest"
	"github.com/tenon-dev/tenon/internal/sandbox/process"
	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/units"
)

// TestReplayStoreImageLive replays a workflow naming an image of the state
// directory's store on the process backend: its sandbox runs the image
// (the replay's backend opens the store of --state-dir, not of its run
// directory inside it).
func TestReplayStoreImageLive(t *testing.T) {
	state, _ := liveImageState(t)
	wf := trajectory.Workflow{Version: trajectory.Version, ID: "in-image", Image: "example.test/busybox:1",
		Actions: []trajectory.Action{{Class: "test", Command: "image check", Run: "cat /etc/issue && test ! -e /usr/bin/python3"}}}
	events := filepath.Join(t.TempDir(), "events.jsonl")
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(events)
			t.Logf("events:\n%s", b)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := Replay(ctx, ReplayConfig{Workflows: []trajectory.Workflow{wf}, Policies: []string{"eager"}, Budget: 512 * units.MiB,
		Backend: "process", StateDir: state, Domain: fmt.Sprintf("tenon-test-app-image-%d", os.Getpid()), TimeScale: 1, EventLog: events, Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	if m := c.Results[0]; m.Completed != 1 {
		t.Fatalf("%d of 1 workflows completed", m.Completed)
	}
	f, err := os.Open(events)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var exits []int
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e controller.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		if e.Kind == "action_done" && e.Exit != nil {
			exits = append(exits, *e.Exit)
		}
	}
	if len(exits) != 1 || exits[0] != 0 {
		t.Errorf("action exits %v, want one 0: the action ran in the image (its /etc/issue, no host python3)", exits)
	}
	if ims, err := imagestore.Find(imageStoreDir(state), "example.test/busybox:1"); err != nil {
		t.Errorf("the image after the replay: %+v, %v", ims, err)
	}
}

// liveImageState skips unless sandboxes of imported images can run here
// (root, overlayfs, cgroups) and returns a state directory whose image
// store holds the busybox image example.test/busybox:1 (imagetest), and
// that image.
func liveImageState(t *testing.T) (string, imagestore.Image) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("live sandboxes need root (cgroups, namespaces, mounts)")
	}
	if b, err := os.ReadFile("/proc/filesystems"); err != nil || !bytes.Contains(b, []byte("\toverlay\n")) {
		t.Skip("image sandboxes need overlayfs: not in /proc/filesystems (modprobe overlay)")
	}
	if _, err := cgroup.Detect("/proc"); err != nil {
		t.Skipf("no usable cgroup hierarchy: %v", err)
	}
	state := t.TempDir()
	store, err := OpenImageStore(state)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	return state, imagetest.Import(t, store, "example.test/busybox:1", imagetest.Busybox(t))
}

// TestMain lets the test binary be the process backend's sandbox init, as
// the tenon binary is, and the memory tool in tenon node's containers.
func TestMain(m *testing.M) {
	process.MaybeInit()
	maybeMemTool()
	os.Exit(m.Run())
}
