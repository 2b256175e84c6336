package policy

import (
	"slices"

	"github.com/tenon-dev/tenon/internal/predict"
)

// This file holds the physical check's risk pooling: how much of the
// admitted actions' predicted peaks admission keeps room for at once.
//
// A predicted peak is often a safety floor rather than an expectation:
// predict.ClassFloor raises an action to the largest peak its class reached
// earlier in the workflow, so after one 50 MiB test run every later shell
// call of the task is predicted at 50 MiB, although most of them grow by
// a few MiB (on the real traces the action peak median is 2.2 MiB). Summing
// such floors over every running action keeps room for all of them to be
// heavy at once, which the task's own history says is unlikely: on a small
// budget the sum filled the physical headroom with 10-25 light actions
// running, and light actions waited for admission most of the time.
//
// Risk pooling keeps room for each running action's typical growth, and
// for the largest excesses (peak less typical) of as many actions as can
// be heavy at once except with probability PoolTail. Each action's
// probability of being heavy comes from its task's own history (Risk):
// the share of its class's earlier actions that reached the upper half of
// the predicted range, with Laplace's rule of succession so that a short
// history never gives certainty. An action with no history of its class,
// or whose peak a retry raised, is certain to reach its peak (today's
// rule for it). The bound holds whatever the sizes are: if at most k
// actions are heavy, their excesses sum to at most the k largest. The gate
// and the OOM hold remain behind it for the tail.

// PoolTail is the probability, under the actions' own history, that more
// admitted actions reach their predicted peak at once than the physical
// check keeps room for.
const PoolTail = 0.01

// Risk estimates how an action of class cls predicted at peak bytes above
// its level grows, from the completed actions of its attempt (hist):
// typical is what it typically grows (point, or the median growth of the
// class's earlier actions when larger, at most peak) and spared the
// probability that it stays below the middle of typical and peak. spared
// is 0 (it reaches peak) without an earlier action of its class.
func Risk(cls string, peak, point int64, hist []predict.Completed) (typical int64, spared float64) {
	cls = predict.NormalizeClass(cls)
	var same []int64
	for _, h := range hist {
		if predict.NormalizeClass(h.Class) == cls {
			same = append(same, h.PeakBytes)
		}
	}
	if len(same) == 0 || peak <= 0 {
		return peak, 0
	}
	slices.Sort(same)
	typical = min(max(point, same[len(same)/2]), peak)
	mid := typical + (peak-typical)/2
	heavy := 0
	for _, v := range same {
		if v > mid {
			heavy++
		}
	}
	return typical, 1 - float64(heavy+1)/float64(len(same)+2)
}

// PooledGrowth is the growth the admitted actions are still predicted to
// make, pooled: each one's remaining typical growth, plus the remaining
// excess (peak over typical) of the k actions with the largest, where k is
// the smallest count such that more than k of them reach their peak with
// probability at most tail (their spared chances independent). An action
// with Spared 0 counts its whole remaining growth, as RemainingGrowth.
func PooledGrowth(as []Admitted, tail float64) int64 {
	var sum int64
	var excess []int64
	var heavy []float64
	for _, a := range as {
		full := RemainingGrowth(a)
		if a.Spared <= 0 {
			sum += full
			continue
		}
		typ := min(max(a.Typical-max(a.Memory-a.Before, 0), 0), full)
		sum += typ
		if full > typ {
			excess = append(excess, full-typ)
			heavy = append(heavy, 1-a.Spared)
		}
	}
	k := heavyCount(heavy, tail)
	slices.SortFunc(excess, func(x, y int64) int { return int(min(max(y-x, -1), 1)) })
	for _, e := range excess[:k] {
		sum += e
	}
	return sum
}

// heavyCount is the smallest k such that more than k of independent
// events with probabilities p happen with probability at most tail.
func heavyCount(p []float64, tail float64) int {
	// dist[j]: probability that exactly j of the events seen so far happen.
	dist := make([]float64, len(p)+1)
	dist[0] = 1
	for i, q := range p {
		for j := i + 1; j > 0; j-- {
			dist[j] = dist[j]*(1-q) + dist[j-1]*q
		}
		dist[0] *= 1 - q
	}
	above := 1.0 // P(more than k happen), k = -1
	for k := range dist {
		above -= dist[k]
		if above <= tail {
			return k
		}
	}
	return len(p)
}
