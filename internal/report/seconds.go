package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
)

// Seconds is a duration in seconds that may be infinite: the makespan or a
// latency percentile of a run that left workflows unfinished (a workflow
// that never completed has an infinite latency, see Summarize). JSON has no
// infinity, so an infinite value is written as null, and null reads back
// as +Inf; Metrics.Unfinished says how many workflows did not finish.
type Seconds float64

// DNF is the value of a makespan or percentile that falls on a workflow
// that did not finish.
var DNF = Seconds(math.Inf(1))

// Finite reports whether s is a measured time (not DNF).
func (s Seconds) Finite() bool { return !math.IsInf(float64(s), 0) && !math.IsNaN(float64(s)) }

// String renders "12.3 s", or "dnf" (did not finish) when s is infinite.
func (s Seconds) String() string {
	if !s.Finite() {
		return "dnf"
	}
	return fmt.Sprintf("%.1f s", float64(s))
}

// MarshalJSON writes a finite value as a number and DNF as null.
func (s Seconds) MarshalJSON() ([]byte, error) {
	if !s.Finite() {
		return []byte("null"), nil
	}
	return json.Marshal(float64(s))
}

// UnmarshalJSON reads a number, or null as DNF.
func (s *Seconds) UnmarshalJSON(b []byte) error {
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		*s = DNF
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("report: seconds: %w", err)
	}
	*s = Seconds(f)
	return nil
}
