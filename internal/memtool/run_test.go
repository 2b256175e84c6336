package memtool

import (
	"bytes"
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/units"
)

// fakeClock advances only when the code under test sleeps.
type fakeClock struct {
	now    time.Time
	sleeps []time.Duration
	onWake func()            // called after each sleep, at the new time
	fail   func(n int) error // error to return from sleep number n, if any
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Unix(1_700_000_000, 0)} }

func (c *fakeClock) Now() time.Time { return c.now }

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if c.fail != nil {
		if err := c.fail(len(c.sleeps)); err != nil {
			return err
		}
	}
	c.sleeps = append(c.sleeps, d)
	c.now = c.now.Add(d)
	return nil
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
		t.Run(tt.name, func(t *testing.T) {
			clk := newFakeClock()
			start := clk.Now()
			ar := newArena()
			t.Cleanup(func() { ar.Free() })
			var got []sample
			o := Options{Profile: tt.p, Now: clk.Now, NoSignals: true}
			o.Sleep = func(ctx context.Context, d time.Duration) error {
				got = append(got, sample{clk.Now().Sub(start), ar.Size()})
				return clk.Sleep(ctx, d)
			}
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
			if elapsed, want := clk.Now().Sub(start), End(tt.p); elapsed != want {
				t.Fatalf("curve took %v, want %v", elapsed, want)
			}
		})
	}
}

func TestRunFilesAndBackground(t *testing.T) {
	clk := newFakeClock()
	dir := t.TempDir()
	var out bytes.Buffer
	var spawned []string
	o := Options{
		Profile:       trajectory.MemProfile{PeakMiB: 6, RampS: 0.03, HoldS: 0.05, RetainMiB: 2, RetainS: 0.1, FilesMiB: 1.5, Background: true},
		FilesDir:      dir,
		BackgroundFor: 90 * time.Second,
		Out:           &out,
		Now:           clk.Now,
		Sleep:         clk.Sleep,
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

func TestRunInterrupted(t *testing.T) {
	clk := newFakeClock()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clk.fail = func(n int) error {
		if n == 3 {
			cancel()
			return ctx.Err()
		}
		return nil
	}
	spawned := false
	var out bytes.Buffer
	o := Options{
		Profile:   trajectory.MemProfile{PeakMiB: 4, RampS: 1, HoldS: 1, RetainMiB: 1, Background: true},
		Out:       &out,
		Now:       clk.Now,
		Sleep:     clk.Sleep,
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
		t.Run(tt.name, func(t *testing.T) {
			clk := newFakeClock()
			start := clk.Now()
			ar := newArena()
			defer ar.Free()
			var sizes []int64
			o := Options{Profile: p, Now: clk.Now, NoSignals: true}
			o.Sleep = func(ctx context.Context, d time.Duration) error {
				sizes = append(sizes, ar.Size())
				if len(sizes)-1 == tt.freezeAt {
					clk.now = clk.now.Add(frozen)
				}
				return clk.Sleep(ctx, d)
			}
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
			if got, want := clk.Now().Sub(start), End(p)+tt.wantLonger; got != want {
				t.Errorf("wall time %v, want %v", got, want)
			}
		})
	}
}
