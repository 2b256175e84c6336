package harness

import (
	"strconv"
	"strings"
)

// heapEvent is one line of `tenon harness heap` output.
type heapEvent struct {
	Kind string // "ready", "ok" or "failed"; "" for other lines
	Sum  uint64
}

// parseHeapLine reads "heap ready ... sum=HEX", "heap verify ok ... sum=HEX"
// and "heap verify FAILED ...".
func parseHeapLine(line string) heapEvent {
	f := strings.Fields(line)
	if len(f) < 2 || f[0] != "heap" {
		return heapEvent{}
	}
	var ev heapEvent
	switch {
	case f[1] == "ready":
		ev.Kind = "ready"
	case f[1] == "verify" && len(f) > 2 && f[2] == "ok":
		ev.Kind = "ok"
	case f[1] == "verify" && len(f) > 2 && f[2] == "FAILED":
		return heapEvent{Kind: "failed"}
	default:
		return heapEvent{}
	}
	for _, kv := range f[2:] {
		if v, ok := strings.CutPrefix(kv, "sum="); ok {
			if n, err := strconv.ParseUint(v, 16, 64); err == nil {
				ev.Sum = n
				return ev
			}
		}
	}
	return heapEvent{} // a ready or ok line always carries its sum
}

// heapEvents parses every line of a heap log.
func heapEvents(log string) []heapEvent {
	var out []heapEvent
	for line := range strings.SplitSeq(log, "\n") {
		if ev := parseHeapLine(line); ev.Kind != "" {
			out = append(out, ev)
		}
	}
	return out
}
