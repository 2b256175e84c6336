package workload

import (
	"fmt"
	"math"
)

// Options shape a generated workload. The zero value generates the kind as
// calibrated, at recorded scale, with every workflow arriving at 0.
type Options struct {
	// Duplicate makes every workflow identical to the first (IDs and arrivals
	// still differ): the adversarial duplicated-task burst of seed 000 §5.4.
	Duplicate bool
	// TimeScale multiplies every wait and action duration (0 means 1).
	TimeScale float64
	// WaitScale multiplies model waits on top of TimeScale (0 means 1), to
	// compress model time more than tool time.
	WaitScale float64
	// MaxWaitS caps each scaled wait (0: no cap).
	MaxWaitS float64
	// MemScale multiplies every peak and retained amount (0 means 1). The
	// recorded actions peak at a few hundred MiB; bench hosts have budgets of
	// a few GiB.
	MemScale float64
	// MaxPeakMiB caps each scaled action peak (0: no cap).
	MaxPeakMiB float64
	// MinDurationS floors each scaled action duration (0 means 0.05 s);
	// MaxDurationS caps it (0: no cap).
	MinDurationS, MaxDurationS float64
	// HeavyShare overrides the kind's share of heavy actions when > 0.
	HeavyShare float64
	// MinActions and MaxActions bound the actions per workflow (0: unbounded).
	// Counts are redrawn until they fall inside, then clamped.
	MinActions, MaxActions int
	// QPS is the offered load in workflows per second: workflow i arrives at
	// i/QPS. Window is the submission window in seconds: with QPS and n <= 0,
	// Generate makes round(QPS×Window) workflows (seed 000 used 7.2 QPS over
	// 10 s); without QPS, arrivals are spread evenly over the window. Neither
	// set: every workflow arrives at 0. Kind rl always arrives at 0.
	QPS, Window float64
	// RampMiBps is the fastest allocation rate a profile asks for (0 means
	// 1024 MiB/s): ramp_s is at least peak_mib / RampMiBps.
	RampMiBps float64
	// Calibration replaces the committed calibration when non-nil.
	Calibration *Calibration
}

// withDefaults fills zero fields and checks the rest.
func (o Options) withDefaults() (Options, error) {
	one := func(p *float64) {
		if *p == 0 {
			*p = 1
		}
	}
	one(&o.TimeScale)
	one(&o.WaitScale)
	one(&o.MemScale)
	if o.MinDurationS == 0 {
		o.MinDurationS = 0.05
	}
	if o.RampMiBps == 0 {
		o.RampMiBps = 1024
	}
	for _, f := range []struct {
		name string
		v    float64
	}{
		{"TimeScale", o.TimeScale}, {"WaitScale", o.WaitScale}, {"MemScale", o.MemScale}, {"RampMiBps", o.RampMiBps},
		{"MinDurationS", o.MinDurationS},
	} {
		if !(f.v > 0) || math.IsInf(f.v, 0) {
			return o, fmt.Errorf("%w: %s must be positive", ErrBadOptions, f.name)
		}
	}
	for _, f := range []struct {
		name string
		v    float64
	}{
		{"MaxWaitS", o.MaxWaitS}, {"MaxPeakMiB", o.MaxPeakMiB}, {"MaxDurationS", o.MaxDurationS},
		{"HeavyShare", o.HeavyShare}, {"QPS", o.QPS}, {"Window", o.Window},
	} {
		if !(f.v >= 0) || math.IsInf(f.v, 0) {
			return o, fmt.Errorf("%w: %s must be >= 0 (0: unset)", ErrBadOptions, f.name)
		}
	}
	switch {
	case o.HeavyShare > 1:
		return o, fmt.Errorf("%w: HeavyShare must be <= 1", ErrBadOptions)
	case o.MinActions < 0 || o.MaxActions < 0 || (o.MaxActions > 0 && o.MinActions > o.MaxActions):
		return o, fmt.Errorf("%w: want 0 <= MinActions <= MaxActions", ErrBadOptions)
	case o.MaxDurationS > 0 && o.MaxDurationS < o.MinDurationS:
		return o, fmt.Errorf("%w: MaxDurationS below MinDurationS", ErrBadOptions)
	}
	return o, nil
}

// arrivals returns the arrival offsets of n workflows.
func (o Options) arrivals(n int) []float64 {
	a := make([]float64, n)
	for i := range a {
		switch {
		case o.QPS > 0:
			a[i] = float64(i) / o.QPS
		case o.Window > 0:
			a[i] = float64(i) * o.Window / float64(n)
		}
		a[i] = round(a[i], 3)
	}
	return a
}
