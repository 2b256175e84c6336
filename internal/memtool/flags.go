package memtool

import (
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/units"
)

// DefaultFilesDir is where FilesMiB of files are written unless --files-dir says otherwise.
const DefaultFilesDir = "/workspace/.tenon-mem"

// NewFlagSet returns the flag set of `tenon tool mem`, bound to o. Sizes take
// units (512MiB, 1.5G; a plain number is bytes); durations are Go durations
// (1.5s, 200ms) or plain seconds; --hold and --retain-for also take
// "forever". The flag set uses flag.ContinueOnError.
func NewFlagSet(name string, o *Options) *flag.FlagSet {
	if o.FilesDir == "" {
		o.FilesDir = DefaultFilesDir
	}
	p := &o.Profile
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Var((*mibValue)(&p.PeakMiB), "peak", "peak resident memory, e.g. 512MiB")
	fs.Var(&secValue{v: &p.RampS}, "ramp", "time to ramp up to the peak, e.g. 2s")
	fs.Var(&secValue{v: &p.HoldS, forever: true}, "hold", `time to hold the peak, or "forever"`)
	fs.Var((*mibValue)(&p.RetainMiB), "retain", "memory kept after the drop (<= peak)")
	fs.Var(&secValue{v: &p.RetainS, forever: true}, "retain-for", `time to keep the retained memory before exiting (0: exit at once), or "forever"`)
	fs.Var((*mibValue)(&p.FilesMiB), "files", "size of files to write before exiting")
	fs.StringVar(&o.FilesDir, "files-dir", o.FilesDir, "directory the files are written into")
	fs.BoolVar(&p.Background, "background", p.Background, "leave a detached process holding the retained memory after exit")
	fs.Var((*durValue)(&o.BackgroundFor), "background-for", "how long the background process lives (0: until killed)")
	fs.StringVar(&o.HolderDir, "holder-dir", o.HolderDir, "share one background process per sandbox: hand the retained memory to the holder listening in this directory, or start it (empty: a process of its own)")
	fs.BoolVar(&o.Serve, "serve-holder", o.Serve, "be the shared holder of --holder-dir: hold --peak and what later runs hand over, until killed")
	fs.BoolVar(&o.CountOwn, "count-own", true, "count this process's own memory (its runtime, about 3 MiB) toward the curve, so that the sandbox shows the profile's memory; false: the tool's own memory comes on top")
	return fs
}

// ParseArgs parses the flags of `tenon tool mem` (the arguments after
// "tool mem") and validates the profile.
func ParseArgs(args []string) (Options, error) {
	var o Options
	fs := NewFlagSet("tenon tool mem", &o)
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		return Options{}, fmt.Errorf("%w: %w", ErrInvalidProfile, err)
	}
	if fs.NArg() > 0 {
		return Options{}, fmt.Errorf("%w: unexpected argument %q (all settings are flags, e.g. --peak 512MiB)", ErrInvalidProfile, fs.Arg(0))
	}
	if o.BackgroundFor < 0 {
		return Options{}, fmt.Errorf("%w: background-for is %s, must be >= 0", ErrInvalidProfile, o.BackgroundFor)
	}
	if err := Validate(o.Profile); err != nil {
		return Options{}, err
	}
	return o, nil
}

// Args returns the argv tail that makes `tenon` run p:
// ["tool", "mem", "--peak", "512MiB", "--ramp", "2s", ...]. Zero optional
// values are left out; a background run shares the sandbox's holder
// (DefaultHolderDir). ParseArgs(Args(p)[2:]) gives back p.
func Args(p trajectory.MemProfile) []string {
	a := []string{"tool", "mem", "--peak", fmtMiB(p.PeakMiB), "--ramp", fmtSec(p.RampS), "--hold", fmtSec(p.HoldS)}
	if p.RetainMiB != 0 {
		a = append(a, "--retain", fmtMiB(p.RetainMiB))
	}
	if p.RetainS != 0 {
		a = append(a, "--retain-for", fmtSec(p.RetainS))
	}
	if p.FilesMiB != 0 {
		a = append(a, "--files", fmtMiB(p.FilesMiB))
	}
	if p.Background {
		a = append(a, "--background", "--holder-dir", DefaultHolderDir)
	}
	return a
}

func fmtMiB(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) + "MiB" }

func fmtSec(v float64) string {
	if math.IsInf(v, 1) {
		return "forever"
	}
	return strconv.FormatFloat(v, 'f', -1, 64) + "s"
}

// parseSeconds reads a Go duration or a plain number of seconds.
func parseSeconds(s string) (float64, error) {
	if v, err := strconv.ParseFloat(s, 64); err == nil && !math.IsInf(v, 0) {
		return v, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("invalid duration %q: want a Go duration such as 1.5s or 200ms, or plain seconds", s)
	}
	return d.Seconds(), nil
}

// mibValue is a flag.Value holding a size in MiB, set from a size with units.
type mibValue float64

func (m *mibValue) String() string { return fmtMiB(float64(*m)) }

func (m *mibValue) Set(s string) error {
	if strings.HasPrefix(strings.TrimSpace(s), "-") {
		return fmt.Errorf("size %q is negative", s)
	}
	n, err := units.ParseSize(s)
	if err != nil {
		return err
	}
	*m = mibValue(float64(n) / float64(units.MiB))
	return nil
}

// secValue is a flag.Value holding seconds; "forever" means +Inf when allowed.
type secValue struct {
	v       *float64
	forever bool
}

func (s *secValue) String() string {
	if s.v == nil {
		return "0s"
	}
	return fmtSec(*s.v)
}

func (s *secValue) Set(v string) error {
	if s.forever && (v == "forever" || v == "inf") {
		*s.v = math.Inf(1)
		return nil
	}
	f, err := parseSeconds(v)
	if err != nil {
		return err
	}
	if f < 0 {
		return fmt.Errorf("duration %q is negative", v)
	}
	*s.v = f
	return nil
}

// durValue is a flag.Value holding a time.Duration, also set from plain seconds.
type durValue time.Duration

func (d *durValue) String() string { return time.Duration(*d).String() }

func (d *durValue) Set(v string) error {
	f, err := parseSeconds(v)
	if err != nil {
		return err
	}
	if f < 0 {
		return fmt.Errorf("duration %q is negative", v)
	}
	*d = durValue(seconds(f))
	return nil
}
