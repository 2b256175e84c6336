package report

import (
	"encoding/json"
	"fmt"
	"io"
)

// WriteJSON writes the comparison as indented JSON:
// {"budget_bytes", "oversubscription", "lower_bound_s", "results": [...]}.
func WriteJSON(w io.Writer, c *Comparison) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(c); err != nil {
		return fmt.Errorf("writing report json: %w", err)
	}
	return nil
}
