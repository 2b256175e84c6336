package memtool

import (
	"bytes"
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tenon-dev/tenon/internal/clock"
	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/units"
)

// The tests run memtool on clock.Real inside a testing/synctest bubble,
// where time passes only while every goroutine waits, so each sleep takes
// exactly what it asked for.

// hookedClock is clock.Real with a hook run before each wait (the n-th,
// from 0, for d): the tests look at the arena there, or stall the curve.
type hookedClock struct {
	clock.Real
	before func(n int, d time.Duration)
	n      int
}

func (c *hookedClock) After(d time.Duration) <-chan time.Time {
	c.before(c.n, d)
	c.n++
	return c.Real.After(d)
}

// sample is the arena size seen at an elapsed time.
type sample struct {
	at   time.Duration
	size int64
}

func TestCurve(t *testing.T) {
	tests := []struct {
		name         string
		p            trajectory.MemProfile
		wantPeak     int64
		wantRetained int64
		wantSamples  []sample // sizes just before the sleep that starts at .at
	}{
		{
			name:     "ramp hold retain",
			p:        trajectory.MemProfile{PeakMiB: 8, RampS: 0.04, HoldS: 0.05, RetainMiB: 2, RetainS: 0.2},
			wantPeak: 8 * units.MiB, wantRetained: 2 * units.MiB,
			wantSamples: []sample{{0, 0}, {10 * time.Millisecond, 2 * units.MiB}, {20 * time.Millisecond, 4 * units.MiB},
				{30 * time.Millisecond, 6 * units.MiB}, {40 * time.Millisecond, 8 * units.MiB}, {90 * time.Millisecond, 2 * units.MiB}},
		},
		{
			name:     "zero hold still reaches peak",
			p:        trajectory.MemProfile{PeakMiB: 4, RampS: 0.02, RetainMiB: 1, RetainS: 0.1},
			wantPeak: 4 * units.MiB, wantRetained: units.MiB,
			wantSamples: []sample{{0, 0}, {10 * time.Millisecond, 2 * units.MiB}, {20 * time.Millisecond, units.MiB}},
		},
		{
			name:     "instant profile",
			p:        trajectory.MemProfile{PeakMiB: 3, RetainMiB: 1},
			wantPeak: 3 * units.MiB, wantRetained: units.MiB,
		},
		{
			name:     "unaligned sizes round up to pages",
			p:        trajectory.MemProfile{PeakMiB: 1.0001, HoldS: 0.01},
			wantPeak: units.MiB + int64(os.Getpagesize()), wantRetained: 0,
			wantSamples: []sample{{0, units.MiB + int64(os.Getpagesize())}},
		},
	}
	for _, tt := range tests {
		synctestRun(t, tt.name, func(t *testing.T) {
			start := time.Now()
			ar := newArena()
			t.Cleanup(func() { ar.Free() })
			var got []sample
			clk := &hookedClock{before: func(int, time.Duration) { got = append(got, sample{time.Since(start), ar.Size()}) }}
			o := Options{Profile: tt.p, Clock: clk, NoSignals: true}
			o.defaults()
			res, err := curve(context.Background(), o, ar)
			if err != nil {
				t.Fatalf("curve: %v", err)
			}
			if res.Peak != tt.wantPeak || res.Retained != tt.wantRetained || ar.Size() != tt.wantRetained {
				t.Fatalf("peak %d retained %d arena %d; want peak %d retained %d", res.Peak, res.Retained, ar.Size(), tt.wantPeak, tt.wantRetained)
			}
			if !slices.Equal(got, tt.wantSamples) {
				t.Fatalf("samples %v, want %v", got, tt.wantSamples)
			}
			if elapsed, want := time.Since(start), End(tt.p); elapsed != want {
				t.Fatalf("curve took %v, want %v", elapsed, want)
			}
		})
	}
}

// TestCurveCountsOwn: with the process's own 3 MiB counted, an 8 MiB
// peak holds 5 MiB in the arena and a 2 MiB retain none, while the result
// reports the profile's sizes.
func TestCurveCountsOwn(t *testing.T) {
	synctestRun(t, "own", func(t *testing.T) {
		ar := newArena()
		t.Cleanup(func() { ar.Free() })
		var arenas []int64
		clk := &hookedClock{before: func(int, time.Duration) { arenas = append(arenas, ar.Size()) }}
		o := Options{Profile: trajectory.MemProfile{PeakMiB: 8, RampS: 0.04, HoldS: 0.05, RetainMiB: 2, RetainS: 0.2}, Clock: clk, NoSignals: true, own: 3 * units.MiB}
		o.defaults()
		res, err := curve(context.Background(), o, ar)
		if err != nil {
			t.Fatalf("curve: %v", err)
		}
		if res.Peak != 8*units.MiB || res.Retained != 2*units.MiB || ar.Size() != 0 {
			t.Fatalf("peak %s retained %s arena %s; want 8 MiB, 2 MiB and an empty arena",
				units.FormatSize(res.Peak), units.FormatSize(res.Retained), units.FormatSize(ar.Size()))
		}
		if want := []int64{0, 0, units.MiB, 3 * units.MiB, 5 * units.MiB, 0}; !slices.Equal(arenas, want) {
			t.Fatalf("arena sizes %v, want %v", arenas, want)
		}
	})
}

func TestRunFilesAndBackground(t *testing.T) { synctest.Test(t, testRunFilesAndBackground) }

func testRunFilesAndBackground(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	var spawned []string
	o := Options{
		Profile:       trajectory.MemProfile{PeakMiB: 6, RampS: 0.03, HoldS: 0.05, RetainMiB: 2, RetainS: 0.1, FilesMiB: 1.5, Background: true},
		FilesDir:      dir,
		BackgroundFor: 90 * time.Second,
		Out:           &out,
		Spawn:         func(args []string) (int, error) { spawned = args; return 4242, nil },
		NoSignals:     true,
	}
	res, err := RunResult(context.Background(), o)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Peak != 6*units.MiB || res.PeakAt != 30*time.Millisecond || res.Elapsed != 180*time.Millisecond {
		t.Fatalf("result %+v", res)
	}
	fi, err := os.Stat(res.FilesPath)
	if err != nil || fi.Size() != 3*units.MiB/2 || !strings.HasPrefix(res.FilesPath, dir) {
		t.Fatalf("files %q: %v, size %v", res.FilesPath, err, fi)
	}
	wantArgs := []string{"tool", "mem", "--peak", "2MiB", "--ramp", "0s", "--hold", "90s"}
	if !slices.Equal(spawned, wantArgs) {
		t.Fatalf("background args %q, want %q", spawned, wantArgs)
	}
	line := out.String()
	for _, w := range []string{"peak 6.0 MiB", "at 0.03s", "retained 2.0 MiB", "took 0.18s", "background pid 4242"} {
		if !strings.Contains(line, w) {
			t.Errorf("summary %q lacks %q", line, w)
		}
	}
	if strings.Count(line, "\n") != 1 {
		t.Errorf("summary %q is not one line", line)
	}
}

func TestRunInterrupted(t *testing.T) { synctest.Test(t, testRunInterrupted) }

func testRunInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clk := &hookedClock{before: func(n int, _ time.Duration) {
		if n == 3 {
			cancel() // the fourth sleep ends at once
		}
	}}
	spawned := false
	var out bytes.Buffer
	o := Options{
		Profile:   trajectory.MemProfile{PeakMiB: 4, RampS: 1, HoldS: 1, RetainMiB: 1, Background: true},
		Out:       &out,
		Clock:     clk,
		Spawn:     func([]string) (int, error) { spawned = true; return 1, nil },
		NoSignals: true,
	}
	err := Run(ctx, o)
	if !errors.Is(err, ErrInterrupted) || !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want ErrInterrupted wrapping context.Canceled", err)
	}
	if spawned {
		t.Fatal("interrupted run spawned its background process")
	}
	if !strings.Contains(out.String(), "(interrupted)") {
		t.Fatalf("summary %q does not say interrupted", out.String())
	}
}

func TestRunRejectsInvalid(t *testing.T) {
	o := Options{Profile: trajectory.MemProfile{PeakMiB: 1, RetainMiB: 2}, NoSignals: true}
	if err := Run(context.Background(), o); !errors.Is(err, ErrInvalidProfile) {
		t.Fatalf("Run = %v, want ErrInvalidProfile", err)
	}
}

// TestCurveStall: a step that takes far longer than planned (the sandbox
// was frozen) advances the profile by at most the plan plus StallSlack, so
// after the thaw the ramp resumes where it stopped instead of jumping to
// the peak the wall clock would give.
func TestCurveStall(t *testing.T) {
	p := trajectory.MemProfile{PeakMiB: 100, RampS: 1, HoldS: 0.5}
	const frozen = 5 * time.Second
	tests := []struct {
		name       string
		freezeAt   int // sleep number that stalls; -1 for none
		wantAfter  int64
		wantLonger time.Duration // wall time beyond End(p)
	}{
		// Sleep 30 starts at 300 ms of profile time (30 MiB): without the
		// stall the next size is 31 MiB; a stall counts 10 ms + slack, so
		// the next size is 41 MiB, not the peak.
		{name: "no stall", freezeAt: -1, wantAfter: 31 * units.MiB},
		{name: "frozen 5 s mid-ramp", freezeAt: 30, wantAfter: 41 * units.MiB, wantLonger: frozen - StallSlack},
	}
	for _, tt := range tests {
		synctestRun(t, tt.name, func(t *testing.T) {
			start := time.Now()
			ar := newArena()
			defer ar.Free()
			var sizes []int64
			clk := &hookedClock{before: func(n int, _ time.Duration) {
				sizes = append(sizes, ar.Size())
				if n == tt.freezeAt {
					time.Sleep(frozen) // the sandbox is frozen before this step's sleep
				}
			}}
			o := Options{Profile: p, Clock: clk, NoSignals: true}
			o.defaults()
			res, err := curve(context.Background(), o, ar)
			if err != nil {
				t.Fatal(err)
			}
			if len(sizes) < 32 {
				t.Fatalf("only %d steps", len(sizes))
			}
			if got := sizes[31]; got != tt.wantAfter {
				t.Errorf("size after the stall = %s, want %s", units.FormatSize(got), units.FormatSize(tt.wantAfter))
			}
			if res.Peak != 100*units.MiB {
				t.Errorf("peak %s, want 100 MiB", units.FormatSize(res.Peak))
			}
			if got, want := time.Since(start), End(p)+tt.wantLonger; got != want {
				t.Errorf("wall time %v, want %v", got, want)
			}
		})
	}
}

// synctestRun is t.Run with the subtest in a synctest bubble.
func synctestRun(t *testing.T, name string, f func(t *testing.T)) {
	t.Run(name, func(t *testing.T) { synctest.Test(t, f) })
}
