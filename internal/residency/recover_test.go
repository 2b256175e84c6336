package residency

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tenon-dev/tenon/internal/archive"
	"github.com/tenon-dev/tenon/internal/store"
)

func TestRecoverAfterRestart(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	ids := idleAgents(t, e, map[string]int64{"resident": 1, "absent": 2, "lost": 3})
	populate(t, e.host, ids["absent"])
	up, ws, _ := e.host.Paths(ctx, ids["absent"])
	wantU, wantW := tree(t, up), tree(t, ws)
	if err := e.m.Teardown(ctx, "absent"); err != nil {
		t.Fatal(err)
	}
	// The "lost" agent's sandbox dies while the controller is down; it has no record.
	if err := e.host.Destroy(ctx, ids["lost"]); err != nil {
		t.Fatal(err)
	}
	// A sandbox the registry does not know (e.g. created just before a crash).
	leftover, err := e.host.Create(ctx, Spec{AgentID: "ghost"})
	if err != nil {
		t.Fatal(err)
	}
	// Debris of an interrupted rematerialization and capture.
	os.MkdirAll(filepath.Join(e.dir, "state/staging/absent-g1-r1-upper/half"), 0o755)
	os.WriteFile(filepath.Join(e.dir, "state/blobs/.capture-123"), []byte("partial"), 0o600)
	os.WriteFile(filepath.Join(e.dir, "state/blobs/data/.capture-456"), []byte("partial"), 0o600)
	// A content blob published by a capture whose record was never committed.
	orphan := filepath.Join(e.dir, "state/blobs/data", strings.Repeat("ab", 32))
	os.WriteFile(orphan, []byte("orphan"), 0o600)
	live, _ := archive.ListContent(filepath.Join(e.dir, "state/blobs"))
	// Files parked by the crashed run.
	os.MkdirAll(filepath.Join(e.dir, "state/parked/x-g1-upper"), 0o700)
	os.WriteFile(filepath.Join(e.dir, "state/parked/x-g1-upper/f"), []byte("p"), 0o600)

	// Restart: a new manager over a reopened store.
	e.m.Close()
	dbPath := filepath.Join(e.dir, "state.db")
	e.st.Close()
	st, err := store.Open(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m, err := New(e.m.cfg, e.host, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	rep, err := m.Recover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := RecoverReport{Resident: []string{"resident"}, Absent: []string{"absent"}, Lost: []string{"lost"}, Destroyed: []string{leftover}}
	if !reflect.DeepEqual(rep, want) {
		t.Errorf("Recover = %+v, want %+v", rep, want)
	}
	dirEmpty(t, filepath.Join(e.dir, "state/staging"))
	if _, err := os.Stat(filepath.Join(e.dir, "state/blobs/.capture-123")); !os.IsNotExist(err) {
		t.Errorf("temporary capture file survived Recover")
	}
	if _, err := os.Stat(filepath.Join(e.dir, "state/blobs/data/.capture-456")); !os.IsNotExist(err) {
		t.Errorf("temporary content blob survived Recover")
	}
	if _, err := os.Stat(orphan); !os.IsNotExist(err) {
		t.Errorf("orphan content blob survived Recover")
	}
	if got, _ := archive.ListContent(filepath.Join(e.dir, "state/blobs")); len(got) != len(live)-1 || len(got) == 0 {
		t.Errorf("%d content blobs after Recover, want the %d the record names", len(got), len(live)-1)
	}
	if n := countFiles(t, filepath.Join(e.dir, "state/parked")); n != 0 {
		t.Errorf("%d parked files survived Recover", n)
	}
	if _, err := st.GetAgent("lost"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("lost agent still registered: %v", err)
	}
	// The resident agent keeps its sandbox; it is not reclaimable before its next boundary.
	if err := m.Teardown(ctx, "resident"); !errors.Is(err, ErrResidentOnly) {
		t.Errorf("teardown before a boundary: err = %v, want ErrResidentOnly", err)
	}
	if id, err := m.Ensure(ctx, info("resident")); err != nil || id != ids["resident"] {
		t.Errorf("Ensure(resident) = %s, %v; want %s", id, err, ids["resident"])
	}
	// The absent agent is rebuilt on demand, byte for byte.
	id, err := m.Ensure(ctx, info("absent"))
	if err != nil {
		t.Fatal(err)
	}
	up2, ws2, _ := e.host.Paths(ctx, id)
	sameTree(t, "writable layer", wantU, tree(t, up2))
	sameTree(t, "workspace", wantW, tree(t, ws2))
	// The next teardown continues the generation sequence.
	if _, err := m.Boundary(ctx, "absent", clean); err != nil {
		t.Fatal(err)
	}
	if err := m.Teardown(ctx, "absent"); err != nil {
		t.Fatal(err)
	}
	if rec, _ := st.LatestRecord("absent"); rec.Generation != 2 {
		t.Errorf("generation after recovery = %d, want 2", rec.Generation)
	}
}

func TestCrashBetweenCommitAndDestroy(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	ids := idleAgents(t, e, map[string]int64{"a": 1})
	// Destroy fails after the commit: the record is there, the sandbox too.
	e.host.destroyErr = func(string) error { return errors.New("injected destroy failure") }
	if err := e.m.Teardown(ctx, "a"); err != nil {
		t.Fatalf("teardown with failing destroy: %v", err)
	}
	e.host.destroyErr = nil
	if n := len(e.events.kinds(EventDestroyFailed)); n != 1 {
		t.Errorf("%d destroy-failed events, want 1", n)
	}
	// The half-destroyed sandbox is never reused: the agent is rebuilt.
	id, err := e.m.Ensure(ctx, info("a"))
	if err != nil {
		t.Fatal(err)
	}
	if id == ids["a"] {
		t.Errorf("Ensure reused the sandbox whose destroy failed")
	}
	// After a restart the old sandbox is a leftover and is destroyed.
	e.m.Close() // before Tick could reap it
	m2, err := New(e.m.cfg, e.host, e.st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m2.Close()
	rep, err := m2.Recover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rep.Destroyed, []string{ids["a"]}) || !reflect.DeepEqual(rep.Resident, []string{"a"}) {
		t.Errorf("Recover = %+v", rep)
	}
}

func TestTickReapsZombies(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	ids := idleAgents(t, e, map[string]int64{"a": 1})
	e.host.destroyErr = func(string) error { return errors.New("injected destroy failure") }
	if err := e.m.Teardown(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	e.m.Tick() // destroy still failing: kept for the next tick
	e.m.Wait()
	e.host.destroyErr = nil
	if e.host.live() != 1 {
		t.Fatalf("zombie gone too early")
	}
	e.m.Tick()
	e.m.Wait()
	if e.host.live() != 0 || !reflect.DeepEqual(e.host.destroyed, []string{ids["a"]}) {
		t.Errorf("zombie not reaped: live %d, destroyed %v", e.host.live(), e.host.destroyed)
	}
}

func TestNewAttemptDropsOldRecord(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	ids := idleAgents(t, e, map[string]int64{"a": 1})
	populate(t, e.host, ids["a"])
	if err := e.m.Teardown(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	in := info("a")
	in.Attempt = 2
	id, err := e.m.Ensure(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if last := e.host.created[len(e.host.created)-1]; last.UpperFrom != "" || last.Generation != 0 {
		t.Errorf("attempt 2 restored attempt 1's state: %+v", last)
	}
	up, _, _ := e.host.Paths(ctx, id)
	if n := len(tree(t, up)); n != 1 {
		t.Errorf("fresh writable layer has %d entries, want 1", n)
	}
	noFiles(t, filepath.Join(e.dir, "state/blobs"))
}
