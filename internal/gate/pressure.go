package gate

import "math"

// Pressure is the global memory-pressure state Q(t). Larger is more severe.
type Pressure int

// Pressure states in increasing severity.
const (
	Green Pressure = iota
	Yellow
	Red
)

func (p Pressure) String() string {
	switch p {
	case Green:
		return "green"
	case Yellow:
		return "yellow"
	case Red:
		return "red"
	}
	return "unknown"
}

// Thresholds are the byte levels that separate the pressure states.
type Thresholds struct {
	Red    int64 // projected free below this is red: RedFraction·budget
	Yellow int64 // projected free below this (and not red) is yellow: (Red+YellowFraction)·budget
}

// ThresholdsFor returns the region boundaries for a domain of the given
// budget (its memory limit in bytes). A budget <= 0 (unlimited) gives zero
// thresholds: only a negative projection is red.
func (c Config) ThresholdsFor(budget int64) Thresholds {
	if budget <= 0 {
		return Thresholds{}
	}
	b := float64(budget)
	return Thresholds{
		Red:    int64(math.Floor(c.RedFraction * b)),
		Yellow: int64(math.Floor((c.RedFraction + c.YellowFraction) * b)),
	}
}

// Classify is step 2 of Algorithm 1: pressure from the available memory M of
// the workload domain and the projected growth rPrev of the previously
// permitted set. Projected free memory is M − rPrev. Red is tested first
// (red priority): red if M < Red or M − rPrev < Red; otherwise yellow if
// M − rPrev < Yellow; otherwise green. See doc.go for why.
func (t Thresholds) Classify(available, rPrev int64) Pressure {
	projected := available - rPrev
	switch {
	case available < t.Red || projected < t.Red:
		return Red
	case projected < t.Yellow:
		return Yellow
	}
	return Green
}
