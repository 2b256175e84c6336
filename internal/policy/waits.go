package policy

import "time"

// WaitAlpha is the weight of a new wait in WaitModel's averages.
const WaitAlpha = 0.3

// WaitModel predicts an agent's next model wait from the waits it was
// seen in, never from the wait to come: an exponentially weighted average
// per agent (WaitAlpha), and one over all agents for an agent not yet
// seen waiting. Residency's decisions read its predictions
// (IdleSandbox.PredictedWait); the daemon, the live replay and the
// simulator each keep one, so all three decide on what a harness could
// know. It has no clock and no lock:
// callers pass durations and serialize calls.
type WaitModel struct {
	all     time.Duration
	haveAll bool
	per     map[string]time.Duration
}

// NewWaitModel returns a model that has seen no wait.
func NewWaitModel() *WaitModel { return &WaitModel{per: map[string]time.Duration{}} }

// Observe learns one wait of agent id; a wait of 0 or less is ignored.
func (w *WaitModel) Observe(id string, d time.Duration) {
	if d <= 0 {
		return
	}
	w.all, w.haveAll = ewma(w.all, d, w.haveAll), true
	old, ok := w.per[id]
	w.per[id] = ewma(old, d, ok)
}

// Predict is agent id's expected next wait: its own average, else the
// average over all agents, else 0 (unknown).
func (w *WaitModel) Predict(id string) time.Duration {
	if d, ok := w.per[id]; ok {
		return d
	}
	return w.all
}

// Set starts agent id's average (or, with all, the one over all agents)
// at d, as stored by an earlier run; d of 0 or less is ignored.
func (w *WaitModel) Set(id string, all bool, d time.Duration) {
	switch {
	case d <= 0:
	case all:
		w.all, w.haveAll = d, true
	default:
		w.per[id] = d
	}
}

// Average is agent id's own average, if it has one.
func (w *WaitModel) Average(id string) (time.Duration, bool) {
	d, ok := w.per[id]
	return d, ok
}

// All is the average over all agents, if any wait was seen.
func (w *WaitModel) All() (time.Duration, bool) { return w.all, w.haveAll }

// Forget drops agent id's average.
func (w *WaitModel) Forget(id string) { delete(w.per, id) }

func ewma(old, x time.Duration, have bool) time.Duration {
	if !have {
		return x
	}
	return time.Duration(WaitAlpha*float64(x) + (1-WaitAlpha)*float64(old))
}
