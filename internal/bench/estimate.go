package bench

import (
	"strings"
	"time"

	"github.com/tenon-dev/tenon/internal/replay"
	"github.com/tenon-dev/tenon/internal/trajectory"
)

// Estimate model: a policy's replay takes a policy-specific multiple of the
// case's makespan lower bound, plus a fixed setup. The factors are the
// makespans measured on the headline case (swe, 20 workflows, 1 GiB, time
// scale 0.2, lower bound 12.6 s; 2 cores, process backend, load average
// 4–8 from other work): at 33f2fbf eager 43.8 s and tenon 113.4 s; at
// 6b6b284 static-N 51–69 s, agent-reservation 58 s, agentcgroup 71 s, gate
// 113 s, admission 42 s (tenon then took 211 s, and 67 s at 94067f4: its
// speed moves with the controller's code more than anything else).
var estFactors = map[string]float64{
	"eager":             3.5,
	"static":            4.6,
	"agent-reservation": 4.6,
	"agentcgroup":       5.7,
	"gate":              8.9,
	"admission":         3.3,
	"tenon":             9.0, // and its ablations
}

// estOverhead is the setup of a fresh domain and backend per policy.
const estOverhead = 3 * time.Second

// Estimate predicts how long the cases take to replay, every repetition.
func Estimate(cases []Case) time.Duration {
	var total time.Duration
	for _, c := range cases {
		for _, p := range c.Policies {
			total += time.Duration(max(c.Reps, 1)) * EstimatePolicy(c, p)
		}
	}
	return total
}

// EstimatePolicy predicts one policy's replay of one case, setup included,
// once.
func EstimatePolicy(c Case, policy string) time.Duration {
	lb := trajectory.LowerBound(replay.Scale(c.Workflows, c.TimeScale), c.Budget)
	f, ok := estFactors[policy]
	switch {
	case ok:
	case strings.HasPrefix(policy, "static-"):
		f = estFactors["static"]
	default: // tenon and its ablations; unknown policies like tenon
		f = estFactors["tenon"]
	}
	return estOverhead + time.Duration(f*lb*float64(time.Second))
}
