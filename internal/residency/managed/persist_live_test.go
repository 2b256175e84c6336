//go:build linux

package managed

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/tenon-dev/tenon/internal/residency"
	"github.com/tenon-dev/tenon/internal/store"
)

// TestLiveTeardownRematerialize: files written outside and inside the
// workspace survive teardown and rematerialization byte for byte, in a new
// sandbox; a background process makes the boundary resident_only and the
// teardown is refused.
func TestLiveTeardownRematerialize(t *testing.T) {
	e := newLiveEnv(t)
	b := e.backend()
	n := newNotes()
	var p pressureVar
	// Waits that amortize the way back, so that yellow tears down; green
	// keeps every idle sandbox (memory plentiful), or it would tear them
	// down too whenever the measured cost happened to amortize.
	m := newManagerAt(t, e, n.host(b, "tp"), &p, 10, func(c *Config) { c.Residency.Free = func() float64 { return 1 } })
	t.Cleanup(func() { m.Close() })

	a := agent("files", 3)
	act(t, m, b, a, 0, writeFiles)
	want, id1 := act(t, m, b, a, 1, sumFiles)
	if strings.Count(want, "\n") != 7 {
		t.Fatalf("sums: %q", want)
	}
	bg := agent("bg", 3)
	act(t, m, b, bg, 0, "sleep 100 >/dev/null 2>&1 &")
	_, bgID := act(t, m, b, bg, 1, "true") // the boundary after it is still resident_only

	p.set(residency.Yellow)
	m.Residency().Tick()
	m.Residency().Wait()
	if alive(b, id1) {
		t.Fatalf("sandbox %s still alive after teardown under yellow pressure", id1)
	}
	if !alive(b, bgID) {
		t.Fatalf("sandbox %s with a background process was torn down", bgID)
	}
	err := m.Residency().Teardown(lctx(t), bg.ID)
	if !errors.Is(err, residency.ErrResidentOnly) || !strings.Contains(err.Error(), "sleep") {
		t.Errorf("Teardown of %s: %v, want ErrResidentOnly naming sleep", bg.ID, err)
	}
	if live := n.live(t); slices.Contains(live, id1) || !slices.Contains(live, bgID) {
		t.Errorf("live per Up/Down: %v, want %s gone and %s live", live, id1, bgID)
	}

	p.set(residency.Green)
	got, id2 := act(t, m, b, a, 2, sumFiles)
	if id2 == id1 {
		t.Fatalf("rematerialized into the same sandbox id %s", id1)
	}
	if got != want {
		t.Errorf("after rematerialization:\n%s\nwant\n%s", got, want)
	}
	if !slices.Contains(n.live(t), id2) {
		t.Errorf("rematerialized sandbox %s not announced with Up", id2)
	}
	mt := m.Residency().Metrics()
	if mt.Teardowns != 1 || mt.Rematerializations != 1 {
		t.Errorf("metrics: %+v, want 1 teardown and 1 rematerialization", mt)
	}

	for _, x := range []string{a.ID, bg.ID} {
		ag := a
		if x == bg.ID {
			ag = bg
		}
		if err := m.Release(lctx(t), ag); err != nil {
			t.Errorf("Release(%s): %v", x, err)
		}
	}
	if live := n.live(t); len(live) != 0 {
		t.Errorf("sandboxes still live after Release: %v", live)
	}
	if ents, _ := m.st.ListAgents(); len(ents) != 0 {
		t.Errorf("registry after Release: %+v", ents)
	}
	assertClean(t, e)
}

// TestLiveCommitFailure: when the recovery record cannot be committed, the
// sandbox stays resident and keeps working.
func TestLiveCommitFailure(t *testing.T) {
	e := newLiveEnv(t)
	b := e.backend()
	n := newNotes()
	var p pressureVar
	m := newManager(t, e, n.host(b, "cf"), &p)
	t.Cleanup(func() { m.Close() })

	a := agent("commit", 3)
	_, id := act(t, m, b, a, 0, "echo kept > /opt/kept")
	fault := errors.New("injected commit failure")
	m.st.SetBeforeCommit(func(op string) error {
		if strings.Contains(op, "record") {
			return fault
		}
		return nil
	})
	err := m.Residency().Teardown(lctx(t), a.ID)
	m.st.SetBeforeCommit(nil)
	if !errors.Is(err, fault) {
		t.Fatalf("Teardown: %v, want the injected fault", err)
	}
	if !alive(b, id) {
		t.Fatalf("sandbox %s destroyed although its record was not committed", id)
	}
	out, id2 := act(t, m, b, a, 1, "cat /opt/kept")
	if id2 != id || out != "kept\n" {
		t.Errorf("after the failed teardown: sandbox %s output %q, want %s and %q", id2, out, id, "kept\n")
	}
	if _, err := m.st.LatestRecord(a.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("LatestRecord: %v, want ErrNotFound", err)
	}
	if err := m.Release(context.Background(), a); err != nil {
		t.Errorf("Release: %v", err)
	}
	assertClean(t, e)
}
