package census

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/tenon-dev/tenon/internal/units"
)

// WriteJSON writes {"samples": [...]} to w.
func WriteJSON(w io.Writer, samples []SampleResult) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if samples == nil {
		samples = []SampleResult{}
	}
	if err := enc.Encode(Report{Samples: samples}); err != nil {
		return fmt.Errorf("writing census json: %w", err)
	}
	return nil
}

// WriteTable renders the samples for people: sizes with units and each
// class as a share of real occupancy.
func WriteTable(w io.Writer, samples []SampleResult) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "config\tN\tt(s)\treal\toracle\tduplicate\tfile_same\tanon=file\theap_birth\theap_later\theld_by_all\tshared_layer\t")
	cell := func(r SampleResult, b int64) string {
		return fmt.Sprintf("%s (%.1f%%)", units.FormatSize(b), 100*r.Share(b))
	}
	for _, r := range samples {
		fmt.Fprintf(tw, "%s\t%d\t%.0f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n",
			r.Config, r.N, r.TimeS,
			units.FormatSize(r.RealBytes), units.FormatSize(r.OracleBytes),
			cell(r, r.DuplicateBytes),
			cell(r, r.Classes.FileSameContent), cell(r, r.Classes.AnonEqualsFile),
			cell(r, r.Classes.HeapBirth), cell(r, r.Classes.HeapLater),
			units.FormatSize(r.HeldByAllBytes), cell(r, r.SharedLayerBytes))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("writing census table: %w", err)
	}
	return nil
}
