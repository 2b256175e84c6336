package workload

import (
	"math"
	"sort"
)

// DistPoints is how many quantiles a Dist stores.
const DistPoints = 21

// Dist is an empirical distribution stored as its quantiles at probabilities
// 0, 1/(DistPoints-1), ..., 1. Sampling interpolates linearly between them.
type Dist []float64

// NewDist summarizes xs (which it does not modify). An empty xs gives nil.
func NewDist(xs []float64) Dist {
	if len(xs) == 0 {
		return nil
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	d := make(Dist, DistPoints)
	for i := range d {
		d[i] = round(quantileSorted(s, float64(i)/float64(DistPoints-1)), 4)
	}
	return d
}

// Quantile returns the q-quantile (0..1); 0 for an empty Dist.
func (d Dist) Quantile(q float64) float64 {
	if len(d) == 0 {
		return 0
	}
	return quantileSorted(d, min(max(q, 0), 1))
}

// Sample maps a uniform u in [0,1) to a value of the distribution.
func (d Dist) Sample(u float64) float64 { return d.Quantile(u) }

// Mean approximates the mean by the trapezoid rule over the quantiles.
func (d Dist) Mean() float64 {
	if len(d) < 2 {
		return d.Quantile(0)
	}
	var s float64
	for i := 1; i < len(d); i++ {
		s += (d[i-1] + d[i]) / 2
	}
	return s / float64(len(d)-1)
}

func quantileSorted(s []float64, q float64) float64 {
	pos := q * float64(len(s)-1)
	i := int(math.Floor(pos))
	if i >= len(s)-1 {
		return s[len(s)-1]
	}
	return s[i] + (pos-float64(i))*(s[i+1]-s[i])
}

func round(v float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(v*p) / p
}
