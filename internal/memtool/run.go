package memtool

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/tenon-dev/tenon/internal/clock"
	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/units"
)

// DefaultStep is how often the ramp allocates its next slice.
const DefaultStep = 10 * time.Millisecond

// StallSlack is how much longer than planned one step of the curve may take
// and still count in full. The curve runs on profile time, not wall time: a
// step that takes longer (the sandbox was frozen by the gate, or a
// debugger stopped it) advances the profile by at most its planned length
// plus StallSlack. A frozen program makes no progress, so after a thaw the
// tool resumes its ramp where it stopped instead of jumping to where the
// wall clock says it should be (which would turn every freeze into a burst
// and defeat the gate). Scheduling delays and page-fault time shorter than
// the slack still count, so an unfrozen run keeps its recorded length.
const StallSlack = 100 * time.Millisecond

// Options configure Run. Zero fields take the defaults noted.
type Options struct {
	Profile       trajectory.MemProfile
	FilesDir      string        // where files are written; DefaultFilesDir
	BackgroundFor time.Duration // lifetime of the background process; 0 means until killed
	Out           io.Writer     // receives the one-line summary; io.Discard

	Step  time.Duration // ramp step; DefaultStep
	Clock clock.Clock   // reads profile time and paces the steps; clock.Real
	// Spawn starts the background process with the argv tail Args builds;
	// SpawnDetached.
	Spawn func(args []string) (pid int, err error)
	// NoSignals leaves SIGTERM and SIGINT alone; by default Run turns them
	// into a clean stop that releases the memory and returns ErrInterrupted.
	NoSignals bool

	// CountOwn counts this process's own anonymous memory at start (the
	// Go runtime and its packages' state, about 3 MiB for tenon) toward
	// the curve: the arena holds what the profile asks less that, so the
	// sandbox sees the profile's memory rather than the profile's plus
	// the tool's (at least the tool's: a profile below it cannot be
	// shown). NewFlagSet turns it on (`tenon tool mem --count-own`, the
	// default); the live replays before 2026-12-07's last ran without it.
	CountOwn bool
	// HolderDir, when set, shares one background process per sandbox:
	// a Profile.Background run without BackgroundFor hands its retained
	// memory to the holder listening in HolderDir, and starts that holder
	// when none answers (holder.go). Empty: every such run leaves a
	// process of its own.
	HolderDir string
	// Serve makes this process the shared holder of HolderDir: it holds
	// the profile's peak and what later runs hand it until it is killed.
	Serve bool

	own int64 // CountOwn's measurement, bytes
}

// Result is what one Run did.
type Result struct {
	Peak          int64         // highest resident size reached, bytes
	PeakAt        time.Duration // when the peak was first reached
	Retained      int64         // resident size after the drop, bytes
	FilesPath     string        // file written, "" if none
	BackgroundPID int           // pid of the background process, 0 if none
	Elapsed       time.Duration
}

// String is the one-line summary Run prints.
func (r Result) String() string {
	s := fmt.Sprintf("mem: peak %s reached at %.2fs, retained %s, took %.2fs",
		units.FormatSize(r.Peak), r.PeakAt.Seconds(), units.FormatSize(r.Retained), r.Elapsed.Seconds())
	if r.FilesPath != "" {
		s += ", files " + r.FilesPath
	}
	if r.BackgroundPID != 0 {
		s += fmt.Sprintf(", background pid %d", r.BackgroundPID)
	}
	return s
}

func (o *Options) defaults() {
	if o.FilesDir == "" {
		o.FilesDir = DefaultFilesDir
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.Step <= 0 {
		o.Step = DefaultStep
	}
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	if o.Spawn == nil {
		o.Spawn = SpawnDetached
	}
}

// Run reproduces o.Profile in this process and prints a one-line summary to
// o.Out. It returns ErrInterrupted (memory released) when ctx ends or, unless
// o.NoSignals, on SIGTERM or SIGINT. Order: curve, files, release, then (if
// Profile.Background and RetainMiB > 0) the detached background process.
func Run(ctx context.Context, o Options) error {
	_, err := RunResult(ctx, o)
	return err
}

// RunResult is Run returning what was done.
func RunResult(ctx context.Context, o Options) (Result, error) {
	o.defaults()
	if err := Validate(o.Profile); err != nil {
		return Result{}, err
	}
	if o.BackgroundFor < 0 {
		return Result{}, fmt.Errorf("%w: background-for is %s, must be >= 0", ErrInvalidProfile, o.BackgroundFor)
	}
	if !o.NoSignals {
		var stop context.CancelFunc
		ctx, stop = signal.NotifyContext(ctx, syscall.SIGTERM, os.Interrupt)
		defer stop()
	}
	p := o.Profile
	if o.CountOwn {
		o.own = ownAnon()
	}
	start := o.Clock.Now()
	ar := newArena()
	defer ar.Free()
	ar.done = ctx.Done()
	if o.Serve && o.HolderDir != "" {
		res, err := serveHolder(ctx, o, ar)
		res.Elapsed = o.Clock.Now().Sub(start)
		return res, fmt.Errorf("%w: %w", ErrInterrupted, err)
	}
	_ = ar.Reserve(mib(p.PeakMiB) - o.own) // without it the curve maps as it grows

	res, err := curve(ctx, o, ar)
	if err == nil && p.FilesMiB > 0 {
		res.FilesPath, err = writeFiles(ctx, o.FilesDir, mib(p.FilesMiB), uint64(start.UnixNano()))
	}
	if freeErr := ar.Free(); err == nil && freeErr != nil {
		err = freeErr
	}
	if err == nil && p.Background && mib(p.RetainMiB) > 0 {
		res.BackgroundPID, err = background(ctx, o)
	}
	res.Elapsed = o.Clock.Now().Sub(start)
	if ctx.Err() != nil && err != nil {
		err = fmt.Errorf("%w: %w", ErrInterrupted, context.Cause(ctx))
		fmt.Fprintln(o.Out, res.String()+" (interrupted)")
		return res, err
	}
	if err != nil {
		return res, fmt.Errorf("running memory profile: %w", err)
	}
	fmt.Fprintln(o.Out, res.String())
	return res, nil
}

// background leaves the retained memory to a background process: the
// shared holder of o.HolderDir (handed to it, or started), or a process of
// its own.
func background(ctx context.Context, o Options) (int, error) {
	args := Args(backgroundProfile(o.Profile, o.BackgroundFor))
	if o.HolderDir == "" || o.BackgroundFor != 0 {
		return o.Spawn(args)
	}
	pid, ok, err := handOff(ctx, o.HolderDir, mib(o.Profile.RetainMiB))
	if ok || err != nil {
		return pid, err
	}
	pid, err = o.Spawn(append(args, "--holder-dir", o.HolderDir, "--serve-holder"))
	if err == nil {
		awaitHolder(ctx, o.HolderDir)
	}
	return pid, err
}

// curve runs the ramp, hold, drop and retain phases in ar. The arena holds
// each target less the process's own memory (o.own); the result reports
// targets as the sandbox sees them.
func curve(ctx context.Context, o Options, ar *arena) (Result, error) {
	p := o.Profile
	var res Result
	resize := func(target int64) (int64, error) {
		err := ar.Resize(target - o.own)
		return ar.Size() + min(o.own, target), err
	}
	peak := mib(p.PeakMiB)
	rampEnd, holdEnd := phaseEnds(p)
	end := End(p)
	var el time.Duration // profile time: wall time minus stalls
	for {
		if el >= end {
			break
		}
		stepStart := o.Clock.Now()
		want := Target(p, el)
		if el >= rampEnd && res.Peak < peak {
			// The peak is reached even when a step jumps past a zero-length hold.
			want = peak
		}
		size, err := resize(want)
		if err != nil {
			return res, err
		}
		if size > res.Peak {
			res.Peak, res.PeakAt = size, el
		}
		if el >= holdEnd {
			res.Retained = size
		}
		if el >= rampEnd && want == peak && Target(p, el) != peak {
			continue // reached the peak late: drop at once
		}
		next := min(nextChange(p, el, o.Step), end)
		if err := clock.Sleep(ctx, o.Clock, next-el); err != nil {
			return res, err
		}
		el += min(o.Clock.Now().Sub(stepStart), next-el+StallSlack)
	}
	if res.Peak < peak {
		size, err := resize(peak)
		if err != nil {
			return res, err
		}
		res.Peak, res.PeakAt = size, el
	}
	size, err := resize(mib(p.RetainMiB))
	res.Retained = size
	return res, err
}

// backgroundProfile is the plain profile the background process runs: jump
// to the retained size and hold it for d (forever if d is 0).
func backgroundProfile(p trajectory.MemProfile, d time.Duration) trajectory.MemProfile {
	hold := math.Inf(1)
	if d > 0 {
		hold = d.Seconds()
	}
	return trajectory.MemProfile{PeakMiB: p.RetainMiB, HoldS: hold}
}
