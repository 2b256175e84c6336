package swarm

import (
	"context"
	"fmt"
	"time"

	"github.com/tenon-dev/tenon/internal/census"
	"github.com/tenon-dev/tenon/internal/clock"
)

// SampleOptions configure a repeated census of resolved siblings.
type SampleOptions struct {
	Samples  int           // number of samples (default 1)
	Interval time.Duration // pause after each sample, on base.Clock
	// OnSample, when set, is called after each sample.
	OnSample func(i int, s *census.Snapshot)
}

// SampleRepeatedly takes o.Samples census snapshots of base's siblings,
// o.Interval apart. base.Start should be set to the series' start.
// Sample always thaws what it froze, also when ctx is cancelled.
func SampleRepeatedly(ctx context.Context, base census.Options, o SampleOptions) ([]*census.Snapshot, error) {
	n := max(o.Samples, 1)
	clk := base.Clock
	if clk == nil {
		clk = clock.Real{}
	}
	var out []*census.Snapshot
	for i := range n {
		if i > 0 {
			if err := clock.Sleep(ctx, clk, o.Interval); err != nil {
				return out, err
			}
		}
		s, err := census.Sample(ctx, base)
		if err != nil {
			return out, fmt.Errorf("census sample %d: %w", i+1, err)
		}
		out = append(out, s)
		if o.OnSample != nil {
			o.OnSample(i, s)
		}
	}
	return out, nil
}
