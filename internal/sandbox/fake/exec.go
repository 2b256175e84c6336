package fake

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/tenon-dev/tenon/internal/memtool"
	"github.com/tenon-dev/tenon/internal/sandbox"
	"github.com/tenon-dev/tenon/internal/units"
)

// Reasons a simulated action ends early.
var (
	errOOM     = errors.New("fake: oom")
	errTimeout = errors.New("fake: timeout")
	errGone    = errors.New("fake: sandbox gone")
)

// run is one simulated action.
type run struct {
	b        *Backend
	bx       *box
	ctx      context.Context
	deadline <-chan time.Time // nil without a timeout
	start    time.Time
	area     float64 // byte-seconds of the action, for the average
	last     time.Time
	peak     int64 // sandbox memory peak during the action
}

// Exec simulates one action.
func (b *Backend) Exec(ctx context.Context, id string, req sandbox.ExecRequest) (sandbox.ExecResult, error) {
	if err := sandbox.ValidateExec(req); err != nil {
		return sandbox.ExecResult{ExitCode: -1}, fmt.Errorf("exec in sandbox %s: %w", id, err)
	}
	b.mu.Lock()
	bx, err := b.lookupLocked(id)
	if err == nil {
		b.stats.Execs++
	}
	b.mu.Unlock()
	if err != nil {
		return sandbox.ExecResult{ExitCode: -1}, fmt.Errorf("exec in sandbox %s: %w", id, err)
	}
	r := &run{b: b, bx: bx, ctx: ctx, start: time.Now()}
	r.last = r.start
	b.mu.Lock()
	r.peak = bx.resident + bx.current
	b.mu.Unlock()
	if req.Timeout > 0 {
		t := time.NewTimer(req.Timeout)
		defer t.Stop()
		r.deadline = t.C
	}
	exit, err := r.dispatch(req)
	res := sandbox.ExecResult{ExitCode: exit, Duration: time.Since(r.start)}
	r.account()
	b.mu.Lock()
	defer b.mu.Unlock()
	if r.live() {
		b.usage -= bx.current
		bx.current = 0
	}
	res.PeakMemory = r.peak
	if res.Duration > 0 {
		res.AvgMemory = int64(r.area / res.Duration.Seconds())
	}
	switch {
	case errors.Is(err, errOOM):
		res.ExitCode, res.OOMKilled = -1, true
		bx.ooms++
		b.stats.OOMKills++
		return res, nil
	case errors.Is(err, errTimeout):
		res.ExitCode, res.TimedOut = -1, true
		b.stats.Timeouts++
		return res, nil
	case errors.Is(err, errGone):
		res.ExitCode = -1
		return res, fmt.Errorf("exec in sandbox %s: %w", id, sandbox.ErrSandboxDead)
	case err != nil:
		res.ExitCode = -1
		return res, fmt.Errorf("exec in sandbox %s: %w", id, err)
	}
	return res, nil
}

// dispatch runs a mem profile or a shell command and returns the exit code.
func (r *run) dispatch(req sandbox.ExecRequest) (int, error) {
	if i := memIndex(req.Argv); i >= 0 {
		o, err := memtool.ParseArgs(req.Argv[i+2:])
		if err != nil {
			return 2, nil // the real tool exits 2 on bad flags
		}
		return 0, r.mem(o)
	}
	cmd := req.Shell
	if cmd == "" {
		cmd = strings.Join(req.Argv, " ")
	}
	return r.shell(cmd)
}

// memIndex finds "tool", "mem" in argv; -1 when absent.
func memIndex(argv []string) int {
	for i := 0; i+1 < len(argv); i++ {
		if argv[i] == "tool" && argv[i+1] == "mem" {
			return i
		}
	}
	return -1
}

// mem simulates a memtool profile.
func (r *run) mem(o memtool.Options) error {
	p := o.Profile
	peak, retain := mib(p.PeakMiB), mib(p.RetainMiB)
	// The ramp charges half the peak on average; model it as nothing
	// during the ramp and the whole peak at its end.
	if err := r.wait(seconds(p.RampS)); err != nil {
		return err
	}
	if err := r.set(peak); err != nil {
		return err
	}
	if err := r.wait(seconds(p.HoldS)); err != nil {
		return err
	}
	if err := r.set(retain); err != nil {
		return err
	}
	if err := r.wait(seconds(p.RetainS)); err != nil {
		return err
	}
	keep := mib(p.FilesMiB)
	if p.Background {
		keep += retain
	}
	if err := r.set(0); err != nil {
		return err
	}
	return r.keep(keep)
}

// shell interprets the tiny shell language.
func (r *run) shell(cmd string) (int, error) {
	f := strings.Fields(cmd)
	if len(f) == 0 {
		return 0, nil
	}
	switch f[0] {
	case "true":
		return 0, nil
	case "false":
		return 1, nil
	case "exit":
		if len(f) > 1 {
			if n, err := strconv.Atoi(f[1]); err == nil {
				return n, nil
			}
		}
		return 0, nil
	case "sleep":
		if len(f) > 1 {
			if s, err := strconv.ParseFloat(f[1], 64); err == nil {
				return 0, r.wait(seconds(s))
			}
		}
		return 1, nil
	case "oom":
		return -1, errOOM
	case "die":
		r.b.mu.Lock()
		r.bx.dead = true
		r.b.mu.Unlock()
		return -1, errGone
	}
	return 0, nil
}

// live reports whether the box is still the backend's (not destroyed).
// Callers hold b.mu.
func (r *run) live() bool { return r.b.boxes[r.bx.info.ID] == r.bx && !r.bx.dead }

// account adds the byte-seconds since the last call to the area.
func (r *run) account() {
	now := time.Now()
	r.b.mu.Lock()
	cur := r.bx.current + r.bx.resident
	r.b.mu.Unlock()
	r.area += float64(cur) * now.Sub(r.last).Seconds()
	r.last = now
}

// set moves the action's charge to bytes, OOM-killing the action when the
// domain budget would be exceeded.
func (r *run) set(bytes int64) error {
	r.account()
	r.b.mu.Lock()
	defer r.b.mu.Unlock()
	if !r.live() {
		return errGone
	}
	if !r.b.chargeLocked(r.bx, &r.bx.current, bytes-r.bx.current) {
		return errOOM
	}
	r.peak = max(r.peak, r.bx.resident+r.bx.current)
	return nil
}

// keep moves bytes from the action to the sandbox's resident memory.
func (r *run) keep(bytes int64) error {
	r.b.mu.Lock()
	defer r.b.mu.Unlock()
	if !r.live() {
		return errGone
	}
	if !r.b.chargeLocked(r.bx, &r.bx.resident, bytes) {
		return errOOM
	}
	r.peak = max(r.peak, r.bx.resident+r.bx.current)
	return nil
}

// wait lets d of unpaused time pass, or ends early on timeout, death or ctx.
func (r *run) wait(d time.Duration) error {
	for d > 0 {
		r.b.mu.Lock()
		resumed, paused, dead := r.bx.resumed, r.bx.pausedCh, !r.live()
		r.b.mu.Unlock()
		if dead {
			return errGone
		}
		select {
		case <-resumed:
		default:
			select { // paused: wait for Resume
			case <-resumed:
				continue
			case <-r.deadline:
				return errTimeout
			case <-r.ctx.Done():
				return r.ctx.Err()
			}
		}
		t0 := r.busy(true)
		t := time.NewTimer(d)
		var err error
		select {
		case <-t.C:
			d = 0
		case <-paused:
			d -= time.Since(t0)
		case <-r.deadline:
			err = errTimeout
		case <-r.ctx.Done():
			err = r.ctx.Err()
		}
		t.Stop()
		r.busy(false)
		if err != nil {
			return err
		}
	}
	return nil
}

// busy starts or ends an unpaused slice, in which the action burns one CPU.
func (r *run) busy(on bool) time.Time {
	now := time.Now()
	r.b.mu.Lock()
	defer r.b.mu.Unlock()
	switch {
	case on:
		r.bx.since = now
	case !r.bx.since.IsZero():
		r.bx.cpu += now.Sub(r.bx.since)
		r.bx.since = time.Time{}
	}
	return now
}

func mib(v float64) int64 { return int64(math.Round(v * float64(units.MiB))) }

func seconds(s float64) time.Duration {
	if math.IsInf(s, 1) || s*float64(time.Second) >= math.MaxInt64 {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(s * float64(time.Second))
}
