package cgroup

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestHoldHigh(t *testing.T) {
	for _, tc := range []struct {
		name          string
		budget, wantH int64
	}{
		{name: "2 GiB", budget: 2 << 30, wantH: 2<<30 - 256<<20},
		{name: "256 MiB", budget: 256 << 20, wantH: 224 << 20},
		{name: "not a multiple of 8", budget: 100, wantH: 88},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := HoldHigh(tc.budget); got != tc.wantH {
				t.Errorf("HoldHigh(%d) = %d, want %d", tc.budget, got, tc.wantH)
			}
		})
	}
}

// TestDomainOOMHoldV2: on v2 the hold is memory.high at HoldHigh of the
// budget, written without reclaim in the writer; off is max.
func TestDomainOOMHoldV2(t *testing.T) {
	d := fakeDomain(t, fakeV2(t))
	dir := d.group.dirs[Memory]
	if err := d.SetOOMHold(true); !errors.Is(err, ErrNoOOMHold) {
		t.Fatalf("SetOOMHold(true) without memory.high = %v, want ErrNoOOMHold", err)
	}
	writeFiles(t, dir, map[string]string{"memory.high": "max\n", "memory.current": "0\n", "memory.events": "high 0\nmax 0\n"})
	var nonblocking []string
	d.group.writeNoReclaim = func(p, v string) error {
		nonblocking = append(nonblocking, filepath.Base(p)+"="+v)
		return writeFile(p, v)
	}
	if err := d.SetOOMHold(true); err != nil {
		t.Fatalf("SetOOMHold(true): %v", err)
	}
	want := fmt.Sprint(HoldHigh(1 << 30))
	if got := readFile(t, filepath.Join(dir, "memory.high")); got != want {
		t.Errorf("memory.high armed = %s, want %s (1 GiB less 1/8)", got, want)
	}
	if err := d.SetOOMHold(false); err != nil {
		t.Fatalf("SetOOMHold(false): %v", err)
	}
	if got := readFile(t, filepath.Join(dir, "memory.high")); got != "max" {
		t.Errorf("memory.high released = %s, want max", got)
	}
	if wantW := []string{"memory.high=" + want, "memory.high=max"}; !slices.Equal(nonblocking, wantW) {
		t.Errorf("O_NONBLOCK writes %q, want %q", nonblocking, wantW)
	}
}

// TestDomainUnderOOMV2 steps UnderOOM reading by reading: tasks wait under
// the v2 hold when usage is above the line and they stalled on memory
// since the previous reading (PSI's some total, else memory.events).
func TestDomainUnderOOMV2(t *testing.T) {
	const budget = 1 << 30
	line := HoldHigh(budget)
	psi := func(someUS int) string {
		return fmt.Sprintf("some avg10=0.00 avg60=0.00 avg300=0.00 total=%d\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", someUS)
	}
	events := func(high, max int) string {
		return fmt.Sprintf("low 0\nhigh %d\nmax %d\noom 0\noom_kill 0\n", high, max)
	}
	type reading struct {
		current  int64
		pressure string // "" removes memory.pressure (no PSI)
		events   string
		want     bool
	}
	for _, tc := range []struct {
		name     string
		readings []reading
	}{
		{name: "PSI: stall above the line is a wait", readings: []reading{
			{current: line + 1, pressure: psi(1000), want: false}, // baseline taken at arming
			{current: line + 1, pressure: psi(1000), want: false}, // no stall since
			{current: line + 1, pressure: psi(90000), want: true},
			{current: line + 1, pressure: psi(190000), want: true},
			{current: line - 1, pressure: psi(290000), want: false}, // stalls below the line: reclaim, not the hold
			{current: line + 1, pressure: psi(290000), want: false}, // above, idle: not waiting
		}},
		{name: "no PSI: memory.events high and max", readings: []reading{
			{current: line + 1, events: events(5, 0), want: false},
			{current: line + 1, events: events(9, 0), want: true},
			{current: line + 1, events: events(9, 2), want: true}, // released: reclaim at memory.max
			{current: line + 1, events: events(9, 2), want: false},
		}},
		{name: "PSI appears: a new baseline, not a stall", readings: []reading{
			{current: line + 1, events: events(5, 0), want: false},
			{current: line + 1, pressure: psi(500), events: events(6, 0), want: false},
			{current: line + 1, pressure: psi(700), events: events(6, 0), want: true},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := fakeDomain(t, fakeV2(t))
			dir := d.group.dirs[Memory]
			set := func(r reading) {
				writeFiles(t, dir, map[string]string{"memory.current": fmt.Sprint(r.current), "memory.events": r.events})
				if r.events == "" {
					writeFiles(t, dir, map[string]string{"memory.events": events(0, 0)})
				}
				removeFile(t, filepath.Join(dir, "memory.pressure"))
				if r.pressure != "" {
					writeFiles(t, dir, map[string]string{"memory.pressure": r.pressure})
				}
			}
			writeFiles(t, dir, map[string]string{"memory.high": "max"})
			set(tc.readings[0])
			if err := d.SetOOMHold(true); err != nil {
				t.Fatal(err)
			}
			for i, r := range tc.readings[1:] {
				set(r)
				got, err := d.UnderOOM()
				if err != nil || got != r.want {
					t.Errorf("reading %d (current %+d of the line, pressure %q, events %q): UnderOOM = %v, %v; want %v",
						i+1, r.current-line, r.pressure, r.events, got, err, r.want)
				}
			}
		})
	}
}

// TestDomainUnderOOMV2Errors: a domain with neither PSI nor memory.events
// fails to say, rather than saying no.
func TestDomainUnderOOMV2Errors(t *testing.T) {
	d := fakeDomain(t, fakeV2(t))
	writeFiles(t, d.group.dirs[Memory], map[string]string{"memory.current": "1"})
	if _, err := d.UnderOOM(); err == nil {
		t.Error("UnderOOM with no stall counter succeeded")
	}
}

// TestOpenDomainDisarmsV2Hold: a v2 domain a crashed run left with the
// hold armed (memory.high below max) gets max back, and the log says so.
func TestOpenDomainDisarmsV2Hold(t *testing.T) {
	newFakeKernel(t)
	l := fakeV2(t)
	writeFiles(t, l.ProcRoot, map[string]string{"meminfo": meminfo})
	stale := mustCreate(t, l, "tenon")
	writeFiles(t, stale.dirs[Memory], map[string]string{"memory.high": "1006632960\n"})
	var logs bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	d, err := OpenDomain(ctx, l, "tenon", 1<<30, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(d.group.dirs[Memory], "memory.high")); got != "max" {
		t.Errorf("memory.high after adoption = %q, want max", got)
	}
	if !strings.Contains(logs.String(), "oom_hold_disarmed=true") {
		t.Errorf("adoption did not log the disarmed hold: %s", logs.String())
	}
}

func TestSetOOMGroup(t *testing.T) {
	for _, tc := range []struct {
		name   string
		layout func(*testing.T) *Layout
		on     bool
		want   []string // writes of memory.oom.group
	}{
		{name: "v2 on", layout: fakeV2, on: true, want: []string{"1"}},
		{name: "v2 off", layout: fakeV2, want: []string{"0"}},
		{name: "v1 has no group kill", layout: fakeV1, on: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := newFakeKernel(t)
			g := mustCreate(t, tc.layout(t), "tenon/sb")
			k.writes = nil
			if err := g.SetOOMGroup(tc.on); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, w := range k.writes {
				if p, v, _ := strings.Cut(w, "="); filepath.Base(p) == "memory.oom.group" {
					got = append(got, v)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("memory.oom.group writes %q, want %q (all writes %q)", got, tc.want, k.writes)
			}
		})
	}
}

// removeFile removes p; a missing p is fine.
func removeFile(t *testing.T, p string) {
	t.Helper()
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
}

// TestDomainAboveHoldLine: on v2 usage strictly above HoldHigh, with or
// without a stall; a domain that cannot be read fails to say.
func TestDomainAboveHoldLine(t *testing.T) {
	const budget = 1 << 30
	line := HoldHigh(budget)
	d := fakeDomain(t, fakeV2(t))
	dir := d.group.dirs[Memory]
	for _, tc := range []struct {
		current int64
		want    bool
	}{{line - 1, false}, {line, false}, {line + 1, true}, {budget, true}} {
		writeFiles(t, dir, map[string]string{"memory.current": fmt.Sprint(tc.current)})
		if got, err := d.AboveHoldLine(); err != nil || got != tc.want {
			t.Errorf("memory.current %+d of the line: AboveHoldLine = %v, %v; want %v", tc.current-line, got, err, tc.want)
		}
	}
	removeFile(t, filepath.Join(dir, "memory.current"))
	if _, err := d.AboveHoldLine(); err == nil {
		t.Error("AboveHoldLine without memory.current succeeded")
	}
}
