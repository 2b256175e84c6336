package controller

import (
	"encoding/json"
)

// MarshalJSON writes the event with omitempty fields left out, except that
// the fields a kind is defined by are always present, zero or not:
// action_done carries avg_bytes, peak_bytes, duration_s, oom and timed_out
// (it is the predictor's training record); admit carries queued_s and
// charge_bytes; sample carries mem_bytes, running, agents and live.
func (e Event) MarshalJSON() ([]byte, error) {
	type plain Event // no methods: no recursion
	b, err := json.Marshal(plain(e))
	if err != nil {
		return nil, err
	}
	var extra []byte
	add := func(key string, zero bool, v string) {
		if zero {
			extra = append(extra, ',', '"')
			extra = append(extra, key...)
			extra = append(extra, '"', ':')
			extra = append(extra, v...)
		}
	}
	switch e.Kind {
	case EventActionDone:
		add("avg_bytes", e.AvgBytes == 0, "0")
		add("peak_bytes", e.PeakBytes == 0, "0")
		add("duration_s", e.DurationS == 0, "0")
		add("oom", !e.OOM, "false")
		add("timed_out", !e.TimedOut, "false")
		add("mem_bytes", e.MemBytes == 0, "0")
	case EventAdmit:
		add("queued_s", e.QueuedS == 0, "0")
		add("charge_bytes", e.Charge == 0, "0")
	case EventSample:
		add("mem_bytes", e.MemBytes == 0, "0")
		add("running", e.Running == 0, "0")
		add("agents", e.Agents == 0, "0")
		add("live", e.Live == 0, "0")
	}
	if len(extra) == 0 {
		return b, nil
	}
	// b is a JSON object with at least t_s and kind: insert before '}'.
	out := append(b[:len(b)-1:len(b)-1], extra...)
	return append(out, '}'), nil
}
