package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/tenon-dev/tenon/internal/app"
	"github.com/tenon-dev/tenon/internal/report"
)

// simJSON is tenon sim's --json output: the comparison, plus the hold's
// counters per policy.
type simJSON struct {
	*report.Comparison
	Holds []app.SimHold `json:"oom_hold"`
}

// writeHolds prints the hold's counters of the runs that armed it.
func writeHolds(w io.Writer, holds []app.SimHold) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	header := false
	for _, h := range holds {
		if h.Holds == 0 && h.Waits == 0 {
			continue
		}
		if !header {
			fmt.Fprintln(tw, "\nOOM hold\tholds\tresolved\treleased\theld\twaits\t")
			header = true
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%.1f s\t%d\t\n", h.Policy, h.Holds, h.Resolved, h.Released, h.HeldS, h.Waits)
	}
	return tw.Flush()
}
