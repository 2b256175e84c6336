package agentcgroup

import (
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// Call is one tool call of tool_calls.json.
type Call struct {
	Start, End time.Time
	Tool       string
	Input      map[string]any
}

// ParseCalls reads tool_calls.json in file order.
func ParseCalls(r io.Reader) ([]Call, error) {
	var raw []struct {
		Timestamp    string         `json:"timestamp"`
		EndTimestamp string         `json:"end_timestamp"`
		Tool         string         `json:"tool"`
		Input        map[string]any `json:"input"`
	}
	if err := json.NewDecoder(r).Decode(&raw); err != nil {
		return nil, fmt.Errorf("decoding tool_calls.json: %w", err)
	}
	out := make([]Call, 0, len(raw))
	for i, c := range raw {
		start, err := time.Parse(time.RFC3339Nano, c.Timestamp)
		if err != nil {
			return nil, fmt.Errorf("tool call %d: timestamp: %w", i, err)
		}
		end, err := time.Parse(time.RFC3339Nano, c.EndTimestamp)
		if err != nil {
			return nil, fmt.Errorf("tool call %d: end_timestamp: %w", i, err)
		}
		out = append(out, Call{Start: start, End: end, Tool: c.Tool, Input: c.Input})
	}
	return out, nil
}

func epoch(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }
