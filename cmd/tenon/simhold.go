package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/tenon-dev/tenon/internal/report"
)

// simHold is what the domain's OOM hold did in one simulated run.
type simHold struct {
	Policy   string  `json:"policy"`
	Holds    int     `json:"holds"`    // waits under the hold that began
	Resolved int     `json:"resolved"` // ended with memory freed, no kill
	Released int     `json:"released"` // released to the OOM killer after the timeout
	HeldS    float64 `json:"held_s"`   // total time under OOM, seconds
	Waits    int     `json:"waits"`    // sandboxes that waited for memory
}

// simJSON is tenon sim's --json output: the comparison, plus the hold's
// counters per policy.
type simJSON struct {
	*report.Comparison
	Holds []simHold `json:"oom_hold"`
}

// writeHolds prints the hold's counters of the runs that armed it.
func writeHolds(w io.Writer, holds []simHold) error {
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
