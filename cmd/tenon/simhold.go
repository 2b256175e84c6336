package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/tenon-dev/tenon/internal/app"
	"github.com/tenon-dev/tenon/internal/report"
	"github.com/tenon-dev/tenon/internal/units"
)

// simJSON is tenon sim's --json output: the comparison, plus the hold's
// counters per policy.
type simJSON struct {
	*report.Comparison
	Holds []app.SimHold `json:"oom_hold"`
	Idle  []app.SimIdle `json:"idle_memory"`
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
			fmt.Fprintln(tw, "\nOOM hold\tholds\tresolved\treleased\tpreempted\trolled back\theld\twaits\tfrozen\t")
			header = true
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%.1f s\t%d\t%d\t\n", h.Policy, h.Holds, h.Resolved, h.Released, h.Preempted, h.RolledBack, h.HeldS, h.Waits, h.Froze)
	}
	return tw.Flush()
}

// writeIdle writes the memory sandboxes running nothing held per policy,
// against the budget, and residency's teardowns and page-outs.
func writeIdle(w io.Writer, idle []app.SimIdle, budget int64) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\nidle memory\tavg\t/ budget\tpeak\t/ budget\tteardowns\tpage-outs\tpaged out\t")
	for _, x := range idle {
		fmt.Fprintf(tw, "%s\t%s\t%.0f%%\t%s\t%.0f%%\t%d\t%d\t%s\t\n", x.Policy,
			units.FormatSize(x.AvgBytes), 100*float64(x.AvgBytes)/float64(budget),
			units.FormatSize(x.PeakBytes), 100*float64(x.PeakBytes)/float64(budget),
			x.Teardowns, x.PageOuts, units.FormatSize(x.PagedOut))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "(idle memory: sandboxes that run nothing, their agent waiting for the model or for admission, or frozen by the gate)")
	return err
}
