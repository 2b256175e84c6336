package residency

import "github.com/tenon-dev/tenon/internal/gate"

// Pressure is the global memory-pressure state Q(t) (seed 000 §3.2): the
// runtime gate's, which residency control reads.
type Pressure = gate.Pressure

// Pressure states.
const (
	Green  = gate.Green
	Yellow = gate.Yellow
	Red    = gate.Red
)
