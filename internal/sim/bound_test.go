package sim

import (
	"fmt"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/workload"
)

// TestMakespanAboveLowerBound checks trajectory.LowerBoundWith against the
// simulator on generated workloads: no run that completes every workflow
// finishes before the bound, and its memory-time integral is at least the
// area the bound counts. Eager runs at the peak it reaches with room to
// spare (the same schedule, with the least slack eager has); static-1 runs
// one workflow at a time at a budget that fits the largest; tenon tears idle
// sandboxes down, which the area must not count on.
func TestMakespanAboveLowerBound(t *testing.T) {
	const base = 4 * tMiB
	// Like workloads/default.jsonl: heavy actions, compressed waits.
	dense := workload.Options{MemScale: 14, MaxPeakMiB: 1200, HeavyShare: 0.2, MinActions: 6, MaxActions: 10,
		WaitScale: 0.5, MaxWaitS: 8, MinDurationS: 0.2, MaxDurationS: 20, QPS: 1.2}
	cases := []struct {
		kind string
		seed int64
		opts workload.Options
	}{
		{"swe", 2, dense},
		{"swe", 3, dense},
		{"science", 4, workload.Options{MemScale: 4, WaitScale: 0.2}},
		{"rl", 5, workload.Options{TimeScale: 0.5}},
	}
	for _, tc := range cases {
		wfs, err := workload.Generate(tc.kind, 12, tc.seed, tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		var area float64 // MiB·s, what LowerBoundWith counts
		for _, w := range wfs {
			area += w.AreaMiBS(float64(base) / tMiB)
		}
		run := func(t *testing.T, pol string, budget int64) *Result {
			t.Helper()
			cfg := Config{Workflows: wfs, Policy: mustSpec(t, pol), Budget: budget, Retries: 5,
				Create: DefaultCreate, Teardown: DefaultTeardown, Rematerialize: DefaultRematerialize,
				SandboxBase: base, Predictors: predsFor(t, fmt.Sprintf("bound-%s-%d", tc.kind, tc.seed), wfs),
				RecordEvery: 5 * time.Millisecond}
			r, err := Run(t.Context(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if r.Completed != len(wfs) {
				t.Logf("%s at %d MiB completed %d of %d workflows: the bound does not apply", pol, budget/tMiB, r.Completed, len(wfs))
				return r
			}
			lb := trajectory.LowerBoundWith(wfs, budget, cfg.bound())
			used := integral(r.Samples, r.Makespan)
			t.Logf("%s at %d MiB: makespan %v, lower bound %.3f s (longest workflow %.3f s), %d OOM kills, %d teardowns; memory-time %.0f MiB·s, counted %.0f",
				pol, budget/tMiB, r.Makespan, lb, trajectory.LowerBoundWith(wfs, 0, cfg.bound()), r.OOMEvents, r.Teardowns, used, area)
			if r.Makespan.Seconds() < lb-1e-6 {
				t.Errorf("%s at %d MiB: makespan %v below the lower bound %.6f s", pol, budget/tMiB, r.Makespan, lb)
			}
			// The samples' left sum is off by at most each drop of memory
			// times the sampling interval: under 1 % here.
			if used < 0.99*area {
				t.Errorf("%s at %d MiB: memory-time %.0f MiB·s below the %.0f the bound counts", pol, budget/tMiB, used, area)
			}
			return r
		}
		t.Run(fmt.Sprintf("%s-%d", tc.kind, tc.seed), func(t *testing.T) {
			free := run(t, "eager", 1<<40)
			if free.OOMEvents != 0 {
				t.Fatalf("eager OOM-killed at 1 TiB")
			}
			tight := run(t, "eager", free.PeakBytes*21/20)
			if tight.OOMEvents != 0 || tight.Makespan != free.Makespan {
				t.Fatalf("eager at its own peak: %d OOM kills, makespan %v (%v with room)", tight.OOMEvents, tight.Makespan, free.Makespan)
			}
			var largest float64
			for _, w := range wfs {
				largest = max(largest, w.ProfiledPeakMiB())
			}
			one := base + mib(largest) + tMiB
			if r := run(t, "static-1", one); r.OOMEvents != 0 {
				t.Fatalf("static-1 at %d MiB: %d OOM kills", one/tMiB, r.OOMEvents)
			}
			for _, f := range []float64{0.3, 0.5, 0.7} {
				run(t, "tenon", int64(f*float64(free.PeakBytes)))
			}
		})
	}
}

// integral is the left sum of the memory samples up to end, MiB·s.
func integral(samples []Sample, end time.Duration) float64 {
	var s float64
	for i, p := range samples {
		next := end
		if i+1 < len(samples) {
			next = samples[i+1].T
		}
		s += float64(p.MemBytes) / tMiB * (next - p.T).Seconds()
	}
	return s
}
