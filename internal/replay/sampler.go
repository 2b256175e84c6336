package replay

import (
	"context"

	"github.com/tenon-dev/tenon/internal/clock"
	"github.com/tenon-dev/tenon/internal/controller"
)

// sample runs until ctx is done, recording domain memory and concurrency
// every interval, and returns the samples.
func (r *runner) sample(ctx context.Context) []Sample {
	var out []Sample
	for {
		now := r.cfg.Clock.Now()
		running, agents := r.rec.gauges()
		s := Sample{T: r.rec.since(now), MemBytes: r.rec.usage(), Running: running, Agents: agents, Live: r.live.Len()}
		out = append(out, s)
		r.rec.emit(controller.Event{
			T: s.T.Seconds(), Kind: controller.EventSample, MemBytes: s.MemBytes,
			Running: s.Running, Agents: s.Agents, Live: s.Live,
		})
		if clock.Sleep(ctx, r.cfg.Clock, r.cfg.SampleInterval) != nil {
			return out
		}
	}
}
