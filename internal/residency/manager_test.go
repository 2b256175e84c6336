package residency

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/archive"
	"github.com/tenon-dev/tenon/internal/store"
)

type env struct {
	m      *Manager
	host   *fakeHost
	st     *store.Store
	dir    string
	events *eventLog
	press  atomic.Int32
}

type eventLog struct {
	mu sync.Mutex
	ev []Event
}

func (l *eventLog) sink(e Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ev = append(l.ev, e)
}

func (l *eventLog) kinds(k EventKind) []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []Event
	for _, e := range l.ev {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

// newEnv builds a manager over a temp-dir fake host and a fresh store.
func newEnv(t *testing.T, mod func(*Config)) *env {
	t.Helper()
	return newEnvWith(t, mod, nil)
}

// newEnvWith is newEnv with the manager's Host made from the fake host by
// wrap (nil: the fake host itself).
func newEnvWith(t *testing.T, mod func(*Config), wrap func(*fakeHost) Host) *env {
	t.Helper()
	dir := t.TempDir()
	st, err := store.Open(filepath.Join(dir, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	e := &env{host: newFakeHost(filepath.Join(dir, "host")), st: st, dir: dir, events: &eventLog{}}
	os.MkdirAll(e.host.root, 0o755)
	cfg := Config{
		StateDir:      filepath.Join(dir, "state"),
		ManualReclaim: true,
		RematBackoff:  time.Millisecond,
		PressurePoll:  10 * time.Millisecond,
		Pressure:      func() Pressure { return Pressure(e.press.Load()) },
		Sink:          e.events.sink,
	}
	if mod != nil {
		mod(&cfg)
	}
	var h Host = e.host
	if wrap != nil {
		h = wrap(e.host)
	}
	m, err := New(cfg, h, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	e.m = m
	return e
}

func info(id string) AgentInfo {
	return AgentInfo{ID: id, WorkflowID: "wf-" + id, Attempt: 1, BaseImage: "host",
		Runtime: store.RuntimeConfig{Env: []string{"A=1"}}}
}

var clean = BoundaryInfo{ActionExited: true, ResultRecorded: true, NextAction: 1, PredictedWait: time.Minute}

// populate writes state inside and outside the workspace of a sandbox.
func populate(t *testing.T, h *fakeHost, id string) {
	t.Helper()
	upper, ws, err := h.Paths(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		filepath.Join(upper, "usr/lib/python3/dist-packages/left_pad/__init__.py"): []byte("def pad(s): return ' ' + s\n"),
		filepath.Join(upper, "etc/app.conf"):                                       []byte("x=1\n"),
		filepath.Join(upper, "root/.cache/empty"):                                  nil,
		filepath.Join(ws, "src/main.py"):                                           []byte("print('hi')\n"),
		filepath.Join(ws, "data/blob.bin"):                                         bytes.Repeat([]byte{7, 1, 3}, 1<<20),
	}
	for p, b := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o640); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("/usr/lib/python3/dist-packages/left_pad", filepath.Join(upper, "usr/lib/left_pad")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(ws, "src"), 0o700); err != nil {
		t.Fatal(err)
	}
}

// tree reads a directory into path → mode|content for comparison.
func tree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		v := fi.Mode().String() + "|" + fi.ModTime().UTC().String()
		switch {
		case fi.Mode().IsRegular():
			b, _ := os.ReadFile(p)
			v += "|" + string(b)
		case fi.Mode()&fs.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			v += "|->" + l
		}
		out[rel] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameTree(t *testing.T, what string, want, got map[string]string) {
	t.Helper()
	if len(want) != len(got) {
		t.Errorf("%s: %d entries, want %d", what, len(got), len(want))
	}
	for p, w := range want {
		if g := got[p]; g != w {
			t.Errorf("%s: %s differs (len %d vs %d)", what, p, len(g), len(w))
		}
	}
}

func dirEmpty(t *testing.T, dir string) {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 0 {
		var names []string
		for _, e := range es {
			names = append(names, e.Name())
		}
		t.Errorf("%s not empty: %v", dir, names)
	}
}

// noFiles fails unless dir holds no file (empty subdirectories allowed).
func noFiles(t *testing.T, dir string) {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 0 {
		t.Errorf("%s holds files: %v", dir, files)
	}
}

func TestTeardownAndRematRestoreState(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	e.host.workingSet["a"] = 300 << 20
	id, err := e.m.Ensure(ctx, info("a"))
	if err != nil {
		t.Fatal(err)
	}
	populate(t, e.host, id)
	upper, ws, _ := e.host.Paths(ctx, id)
	wantU, wantW := tree(t, upper), tree(t, ws)
	if v, err := e.m.Boundary(ctx, "a", clean); err != nil || !v.Restartable {
		t.Fatalf("Boundary = %+v, %v", v, err)
	}
	if err := e.m.Teardown(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if e.host.live() != 0 {
		t.Fatalf("sandbox still live after teardown")
	}
	rec, err := e.st.LatestRecord("a")
	if err != nil {
		t.Fatal(err)
	}
	if rec.Generation != 1 || rec.NextAction != 1 || len(rec.Artifacts) != 2 || rec.BaseImage != "host" {
		t.Errorf("record = %+v", rec)
	}
	if ag, _ := e.st.GetAgent("a"); ag.State != store.StateAbsent || ag.SandboxID != "" {
		t.Errorf("registry = %+v, want absent", ag)
	}
	id2, err := e.m.Ensure(ctx, info("a"))
	if err != nil {
		t.Fatal(err)
	}
	if id2 == id {
		t.Errorf("rematerialized sandbox reuses id %s", id)
	}
	upper2, ws2, _ := e.host.Paths(ctx, id2)
	sameTree(t, "writable layer", wantU, tree(t, upper2))
	sameTree(t, "workspace", wantW, tree(t, ws2))
	dirEmpty(t, filepath.Join(e.dir, "state/staging"))
	last := e.host.created[len(e.host.created)-1]
	if last.Generation != 1 || last.UpperFrom == "" || last.Runtime.Env[0] != "A=1" {
		t.Errorf("remat spec = %+v", last)
	}
	mt := e.m.Metrics()
	if mt.Teardowns != 1 || mt.Rematerializations != 1 || mt.Creates != 1 || mt.MemoryReclaimed != 300<<20 ||
		mt.BytesCaptured != rec.Artifacts[0].Ref.Written+rec.Artifacts[1].Ref.Written ||
		mt.BytesState != rec.Artifacts[0].Ref.Bytes+rec.Artifacts[1].Ref.Bytes || mt.LifecycleOverhead <= 0 {
		t.Errorf("metrics = %+v", mt)
	}
	if mt.RestartableShare() != 1 {
		t.Errorf("restartable share = %v", mt.RestartableShare())
	}
	// A second cycle commits generation 2 and prunes generation 1 and its blobs.
	if _, err := e.m.Boundary(ctx, "a", clean); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(ws2, "src/main.py"), []byte("print('v2')\n"), 0o640)
	if err := e.m.Teardown(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	recs, _ := e.st.Records("a")
	if len(recs) != 1 || recs[0].Generation != 2 {
		t.Errorf("records after second teardown = %+v", recs)
	}
	if _, err := os.Stat(blobOf(e, rec, store.ArtifactWorkspace)); !os.IsNotExist(err) {
		t.Errorf("generation-1 workspace blob not collected (stat err %v)", err)
	}
	// Exactly the contents generation 2 names remain (main.py's old one went).
	want := map[string]bool{}
	for _, a := range recs[0].Artifacts {
		cs, err := archive.ContentDigests(filepath.Join(e.dir, "state/blobs"), a.Ref.Digest)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range cs {
			want[h] = true
		}
	}
	have, _ := archive.ListContent(filepath.Join(e.dir, "state/blobs"))
	if len(have) != len(want) || len(want) == 0 {
		t.Errorf("%d content blobs stored, generation 2 names %d", len(have), len(want))
	}
	for _, h := range have {
		if !want[h] {
			t.Errorf("content blob %s not named by generation 2 survives", h)
		}
	}
	// Release removes everything.
	if err := e.m.Release(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	noFiles(t, filepath.Join(e.dir, "state/blobs"))
	if _, err := e.st.GetAgent("a"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("registry entry survives Release: %v", err)
	}
}

func blobOf(e *env, rec store.Record, name string) string {
	ref, _ := rec.Artifact(name)
	p, _ := archive.RefPath(filepath.Join(e.dir, "state/blobs"), ref)
	return p
}

type enospc struct {
	w io.Writer
	n int
}

func (w *enospc) Write(p []byte) (int, error) {
	if w.n+len(p) > 4096 {
		return 0, syscall.ENOSPC
	}
	w.n += len(p)
	return w.w.Write(p)
}

func TestTeardownFailClosed(t *testing.T) {
	boom := errors.New("injected commit failure")
	tests := []struct {
		name    string
		cfg     func(*Config)
		setup   func(e *env)
		wantErr error
	}{
		{"capture hits a full disk", func(c *Config) {
			c.Capture.WrapFile = func(w io.Writer) io.Writer { return &enospc{w: w} }
		}, nil, syscall.ENOSPC},
		{"store commit fails", nil, func(e *env) {
			e.st.SetBeforeCommit(func(op string) error {
				if op == "put record" {
					return boom
				}
				return nil
			})
		}, boom},
		{"background process appears before teardown", nil, func(e *env) {
			e.host.procs["a"] = []ProcInfo{{4242, "redis-server"}}
		}, ErrResidentOnly},
		{"paths unavailable", nil, func(e *env) {
			e.host.mu.Lock()
			e.host.boxes["sb-1"].upper = filepath.Join(e.dir, "missing")
			e.host.mu.Unlock()
		}, fs.ErrNotExist},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			e := newEnv(t, tc.cfg)
			id, err := e.m.Ensure(ctx, info("a"))
			if err != nil {
				t.Fatal(err)
			}
			populate(t, e.host, id)
			if _, err := e.m.Boundary(ctx, "a", clean); err != nil {
				t.Fatal(err)
			}
			if tc.setup != nil {
				tc.setup(e)
			}
			err = e.m.Teardown(ctx, "a")
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Teardown err = %v, want %v", err, tc.wantErr)
			}
			e.st.SetBeforeCommit(nil)
			if e.host.live() != 1 || len(e.host.destroyed) != 0 {
				t.Errorf("sandbox destroyed despite failure: live %d, destroyed %v", e.host.live(), e.host.destroyed)
			}
			if _, err := e.st.LatestRecord("a"); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("record exists after failed teardown: %v", err)
			}
			noFiles(t, filepath.Join(e.dir, "state/blobs"))
			if ag, _ := e.st.GetAgent("a"); ag.State != store.StateResident || ag.SandboxID != id {
				t.Errorf("registry = %+v, want resident in %s", ag, id)
			}
			if mt := e.m.Metrics(); mt.TeardownFailures != 1 || mt.Teardowns != 0 {
				t.Errorf("metrics = %+v", mt)
			}
			// Dispatch continues on the same sandbox without a rebuild.
			id2, err := e.m.Ensure(ctx, info("a"))
			if err != nil || id2 != id || len(e.host.created) != 1 {
				t.Errorf("Ensure after failed teardown = %s, %v (creates %d), want %s", id2, err, len(e.host.created), id)
			}
		})
	}
}

func TestTeardownRefusals(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	if _, err := e.m.Ensure(ctx, info("a")); err != nil {
		t.Fatal(err)
	}
	if err := e.m.Teardown(ctx, "a"); !errors.Is(err, ErrBusy) {
		t.Errorf("teardown during action: err = %v, want ErrBusy", err)
	}
	e.host.procs["a"] = []ProcInfo{{99, "python3"}}
	v, err := e.m.Boundary(ctx, "a", clean)
	if err != nil || v.Restartable || v.Reason != "background process 99 (python3) still running" {
		t.Errorf("Boundary = %+v, %v", v, err)
	}
	e.press.Store(int32(Red))
	if ds := e.m.Tick(); len(ds) != 0 {
		t.Errorf("red Tick reclaimed a resident_only sandbox: %+v", ds)
	}
	if err := e.m.Teardown(ctx, "a"); !errors.Is(err, ErrResidentOnly) {
		t.Errorf("Teardown err = %v, want ErrResidentOnly", err)
	}
	if mt := e.m.Metrics(); mt.Boundaries != 1 || mt.RestartableBoundaries != 0 {
		t.Errorf("metrics = %+v", mt)
	}
	if err := e.m.Teardown(ctx, "nobody"); !errors.Is(err, ErrUnknownAgent) {
		t.Errorf("unknown agent: err = %v", err)
	}
}

func TestRematerializationRetries(t *testing.T) {
	tests := []struct {
		name  string
		fault func(h *fakeHost)
	}{
		{"create fails once after leaving junk in staging", func(h *fakeHost) {
			h.createErr = func(n int, spec Spec) error {
				if n == 2 {
					os.WriteFile(filepath.Join(spec.UpperFrom, "junk"), []byte("partial"), 0o644)
					os.Remove(filepath.Join(spec.WorkspaceFrom, "src/main.py"))
					return errors.New("injected create failure")
				}
				return nil
			}
		}},
		{"ready fails once", func(h *fakeHost) {
			first := true
			h.readyErr = func(id string) error {
				if id != "sb-1" && first {
					first = false
					return errors.New("injected readiness failure")
				}
				return nil
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			e := newEnv(t, nil)
			id, _ := e.m.Ensure(ctx, info("a"))
			populate(t, e.host, id)
			upper, ws, _ := e.host.Paths(ctx, id)
			wantU, wantW := tree(t, upper), tree(t, ws)
			e.m.Boundary(ctx, "a", clean)
			if err := e.m.Teardown(ctx, "a"); err != nil {
				t.Fatal(err)
			}
			tc.fault(e.host)
			// The action would run here: it must see the fully restored state.
			ensureRestored(t, e, wantU, wantW)
			if e.host.live() != 1 {
				t.Errorf("%d live sandboxes, want 1", e.host.live())
			}
			dirEmpty(t, filepath.Join(e.dir, "state/staging"))
			if mt := e.m.Metrics(); mt.RematFailures != 1 || mt.Rematerializations != 1 {
				t.Errorf("metrics = %+v", mt)
			}
			if n := len(e.events.kinds(EventRematFailed)); n != 1 {
				t.Errorf("%d remat-failed events, want 1", n)
			}
		})
	}
}

// TestRematerializationNeverUsesCorruptState corrupts the committed state
// after a teardown and checks that no sandbox is made from it. A teardown
// also parks the sandbox's files, and a rematerialization adopts a parked
// file instead of reading its content blob when the file hashes to the
// manifest's digest; so every case fixes whether the files are parked, and
// where they are, their parked copies are state to corrupt as well.
// TestParkedCopiesStandInForCorruptBlobs covers intact parked copies.
func TestRematerializationNeverUsesCorruptState(t *testing.T) {
	flipAll := func(t *testing.T, dir string) {
		t.Helper()
		n := 0
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				n++
				flip(t, p)
			}
			return err
		})
		if err != nil || n == 0 {
			t.Fatalf("no files to corrupt in %s: %v", dir, err)
		}
	}
	tests := []struct {
		name    string
		parked  bool
		corrupt func(t *testing.T, e *env, rec store.Record)
	}{
		{"manifest, files parked", true, func(t *testing.T, e *env, rec store.Record) {
			flip(t, blobOf(e, rec, store.ArtifactWorkspace))
		}},
		{"file content, parking off", false, func(t *testing.T, e *env, _ store.Record) {
			flipAll(t, filepath.Join(e.dir, "state/blobs/data"))
		}},
		{"file content and parked copies", true, func(t *testing.T, e *env, _ store.Record) {
			flipAll(t, filepath.Join(e.dir, "state/blobs/data"))
			flipAll(t, e.m.parkRoot())
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			e := newEnv(t, func(c *Config) { c.MaxRematAttempts = 3; c.NoParking = !tc.parked })
			tearDownPopulated(t, e, tc.parked)
			rec, _ := e.st.LatestRecord("a")
			tc.corrupt(t, e, rec)
			for range 2 {
				_, err := e.m.Ensure(ctx, info("a"))
				if !errors.Is(err, ErrRematFailed) || !errors.Is(err, archive.ErrDigestMismatch) {
					t.Fatalf("Ensure err = %v, want ErrRematFailed wrapping ErrDigestMismatch", err)
				}
			}
			if e.host.live() != 0 || len(e.host.created) != 1 {
				t.Errorf("a sandbox was created from corrupt state: live %d, creates %d", e.host.live(), len(e.host.created))
			}
			dirEmpty(t, filepath.Join(e.dir, "state/staging"))
			if mt := e.m.Metrics(); mt.RematFailures != 6 {
				t.Errorf("remat failures = %d, want 6 (2 Ensures × 3 tries)", mt.RematFailures)
			}
			if _, err := e.st.LatestRecord("a"); err != nil {
				t.Errorf("record lost after failed rematerialization: %v", err)
			}
		})
	}
}

// flip inverts the middle byte of the file p in place.
func flip(t *testing.T, p string) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil || len(b) == 0 {
		t.Fatalf("corrupting %s: %d bytes, %v", p, len(b), err)
	}
	b[len(b)/2] ^= 0xff
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// tearDownPopulated creates agent a's sandbox, fills it (populate), tears
// it down and returns the trees it had. With parked, it first lets the
// files' ctimes fall behind the capture's seal, so that the capture's stat
// cache vouches for them (archive.StatCache.Seal) and the teardown parks
// all four files with content; it checks that it did. Without, the
// manager must have parking off.
func tearDownPopulated(t *testing.T, e *env, parked bool) (upper, ws map[string]string) {
	t.Helper()
	ctx := context.Background()
	id, err := e.m.Ensure(ctx, info("a"))
	if err != nil {
		t.Fatal(err)
	}
	populate(t, e.host, id)
	u, w, _ := e.host.Paths(ctx, id)
	upper, ws = tree(t, u), tree(t, w)
	want := 0
	if parked {
		time.Sleep(50 * time.Millisecond)
		want = 4
	}
	e.m.Boundary(ctx, "a", clean)
	if err := e.m.Teardown(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if n := countFiles(t, e.m.parkRoot()); n != want {
		t.Fatalf("%d files parked, want %d", n, want)
	}
	return upper, ws
}

// ensureRestored rematerializes agent a and checks that its sandbox has
// the trees upper and ws (as tree reads them); it returns the sandbox.
func ensureRestored(t *testing.T, e *env, upper, ws map[string]string) string {
	t.Helper()
	ctx := context.Background()
	id, err := e.m.Ensure(ctx, info("a"))
	if err != nil {
		t.Fatal(err)
	}
	u, w, _ := e.host.Paths(ctx, id)
	sameTree(t, "writable layer", upper, tree(t, u))
	sameTree(t, "workspace", ws, tree(t, w))
	return id
}
