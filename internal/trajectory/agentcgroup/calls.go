package agentcgroup

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
)

// Call is one tool call of tool_calls.json.
type Call struct {
	Start, End time.Time
	// EndInferred: the file gave no usable end_timestamp (the older
	// layout has none): Convert infers the end.
	EndInferred bool
	Tool        string
	Input       map[string]any
}

// ParseCalls reads tool_calls.json in file order. A call without a valid
// timestamp is dropped (WarnBadCall); a missing, unreadable or earlier
// end_timestamp leaves End zero and EndInferred set, for Convert to infer;
// a file cut off inside the array
// keeps the complete calls (WarnTruncated). Anything that is not an array
// of calls is an error.
func ParseCalls(r io.Reader) ([]Call, Warnings, error) {
	var out []Call
	warn := Warnings{}
	err := decodeArray(json.NewDecoder(r), func(_ int, raw json.RawMessage) {
		var c struct {
			Timestamp    string         `json:"timestamp"`
			EndTimestamp string         `json:"end_timestamp"`
			Tool         string         `json:"tool"`
			Input        map[string]any `json:"input"`
		}
		if json.Unmarshal(raw, &c) != nil {
			warn.add(WarnBadCall, 1)
			return
		}
		start, err := time.Parse(time.RFC3339Nano, c.Timestamp)
		if err != nil {
			warn.add(WarnBadCall, 1)
			return
		}
		call := Call{Start: start, Tool: c.Tool, Input: c.Input}
		end, err := time.Parse(time.RFC3339Nano, c.EndTimestamp)
		if err != nil || end.Before(start) {
			call.EndInferred = true
		} else {
			call.End = end
		}
		out = append(out, call)
	})
	if errors.Is(err, errTruncated) {
		warn.add(WarnTruncated, 1)
	} else if err != nil {
		return nil, nil, fmt.Errorf("tool_calls.json: %w", err)
	}
	return out, warn, nil
}

func epoch(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }
