package residency

// Pressure is the global memory-pressure state Q(t) (seed 000 §3.2).
type Pressure int

// Pressure states.
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
