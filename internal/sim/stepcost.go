package sim

import (
	"fmt"
	"time"

	"github.com/tenon-dev/tenon/internal/gate"
)

// StepCost measures the wall time of one gate.Controller.Step over n live
// sandboxes, averaged over iters control periods of simulated time. Half
// the sandboxes grow at 8 MiB/s, a quarter hold and a quarter shrink, so the
// estimator has work on every iteration. The budget puts the domain in the
// given pressure (gate.Green: ample memory; otherwise 20% of the budget is
// free and the projected growth makes it red, so the selection walk of
// Algorithm 1 runs over every candidate). It returns the mean Step time and
// the last iteration's pressure.
func StepCost(n, iters int, p gate.Pressure) (time.Duration, gate.Pressure) {
	cfg := gate.DefaultConfig()
	c := gate.New(cfg)
	per := int64(64 << 20)
	used := per * int64(n)
	budget := 4 * used
	if p != gate.Green {
		// Available = budget − used lands in the yellow region.
		budget = int64(float64(used) / (1 - 0.2))
	}
	obs := gate.Observation{Budget: budget, Available: budget - used, Sandboxes: make([]gate.Sample, n)}
	for i := range n {
		obs.Sandboxes[i] = gate.Sample{ID: fmt.Sprintf("sb-%06d", i), Footprint: per}
	}
	var wall time.Duration
	var last gate.Decision
	now := epoch
	for it := range iters + 1 {
		now = now.Add(cfg.Period)
		for i := range obs.Sandboxes {
			s := &obs.Sandboxes[i]
			s.CPU += cfg.Period
			switch i % 4 {
			case 0, 1:
				s.Footprint += 8 << 20 / 10
			case 3:
				s.Footprint = max(s.Footprint-(8<<20/10), 1<<20)
			}
		}
		t0 := time.Now()
		last = c.Step(now, obs)
		if it > 0 { // the first Step registers every sandbox
			wall += time.Since(t0)
		}
	}
	return wall / time.Duration(max(iters, 1)), last.Pressure
}
