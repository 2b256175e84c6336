package swarm

import (
	"context"
	"fmt"
	"time"

	"github.com/tenon-dev/tenon/internal/census"
)

// SampleOptions configure a repeated census of resolved siblings.
type SampleOptions struct {
	Samples  int           // number of samples (default 1)
	Interval time.Duration // pause after each sample
	// Sleep waits d or until ctx ends (default: a timer); tests inject it.
	Sleep func(ctx context.Context, d time.Duration) error
	// OnSample, when set, is called after each sample.
	OnSample func(i int, s *census.Snapshot)
}

// SampleRepeatedly takes o.Samples census snapshots of base's siblings,
// o.Interval apart. base.Start should be set to the series' start.
// Sample always thaws what it froze, also when ctx is cancelled.
func SampleRepeatedly(ctx context.Context, base census.Options, o SampleOptions) ([]*census.Snapshot, error) {
	n := max(o.Samples, 1)
	sleep := o.Sleep
	if sleep == nil {
		sleep = sleepCtx
	}
	var out []*census.Snapshot
	for i := range n {
		if i > 0 {
			if err := sleep(ctx, o.Interval); err != nil {
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

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
