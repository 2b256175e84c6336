package workload

import (
	"fmt"
	"strings"
)

// RealSuffix makes a kind's real-shape variant: "swe-real" is swe at the
// traces' memory scale, with their action counts and waits, and only the two
// caps below. Generate draws "<kind>-real" workflow i from the same random
// stream as "<kind>" workflow i, so the two differ only by the caps.
const RealSuffix = "-real"

// Real-shape caps. Both cut the 21-quantile calibration's top segment, which
// interpolates linearly from the 95th percentile to the single largest
// recorded value and so overstates the tail:
//   - RealMaxPeakMiB: 7 of the 1151 recorded actions peak above it (the
//     largest at 1797 MiB); with it every action fits in 0.9 of a 1 GiB
//     budget, as a bench case asks.
//   - RealMaxWaitS: 1.3 % of the recorded model waits exceed it. Uncapped,
//     generated waits average 15.2 s against the traces' 5.7 s; capped at
//     60 s they average 6.0 s. The median (2.8 s) is unchanged.
const (
	RealMaxPeakMiB = 800
	RealMaxWaitS   = 60
)

// realShape splits a "<kind>-real" name into its kind and fills the caps of
// o that are unset; other names pass through unchanged. A real-shape kind
// keeps the traces' memory scale and action counts, so MemScale (other than
// 1), HeavyShare, MinActions and MaxActions are rejected.
func realShape(name string, o Options) (string, Options, error) {
	kind, ok := strings.CutSuffix(name, RealSuffix)
	if !ok {
		return name, o, nil
	}
	if (o.MemScale != 0 && o.MemScale != 1) || o.HeavyShare != 0 || o.MinActions != 0 || o.MaxActions != 0 {
		return "", o, fmt.Errorf("%w: kind %q keeps the traces' memory scale, heavy share and action counts; "+
			"set MemScale, HeavyShare, MinActions and MaxActions only on %q", ErrBadOptions, name, kind)
	}
	if o.MaxPeakMiB == 0 {
		o.MaxPeakMiB = RealMaxPeakMiB
	}
	if o.MaxWaitS == 0 {
		o.MaxWaitS = RealMaxWaitS
	}
	return kind, o, nil
}
