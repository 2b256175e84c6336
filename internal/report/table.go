package report

import (
	"fmt"
	"io"
	"slices"
	"text/tabwriter"

	"github.com/tenon-dev/tenon/internal/units"
)

// WriteTable writes the comparison as an aligned table, one policy a row.
func WriteTable(w io.Writer, c *Comparison) error {
	fmt.Fprintf(w, "budget %s   oversubscription %.2fx   lower bound %s   time scale %g\n\n",
		units.FormatSize(c.BudgetBytes), c.Oversubscription, seconds(c.LowerBoundS), c.TimeScale)
	width := len("policy")
	for _, m := range c.Results {
		width = max(width, len(m.Policy))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%-*s\t", width, "policy")
	fmt.Fprintln(tw, "makespan\tvs eager\t/ bound\tP50\tP95\tpeak mem\t/ budget\tOOM\ttimeouts\tattempts\tfail rate\tdone\t")
	for _, m := range c.Results {
		fmt.Fprintf(tw, "%-*s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%.1f%%\t%d/%d\t\n",
			width, m.Policy, seconds(m.MakespanS), ratio(m.SpeedupVsEager), ratio(m.OverLowerBound),
			seconds(m.P50S), seconds(m.P95S), units.FormatSize(m.PeakBytes), ratio(m.PeakOverBudget),
			m.OOMEvents, m.Timeouts, m.Attempts, 100*m.AttemptFailureRate, m.Completed, m.Workflows)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("writing report table: %w", err)
	}
	return writeResidency(w, c, width)
}

// writeResidency adds the lifecycle table of the policies with residency.
func writeResidency(w io.Writer, c *Comparison, width int) error {
	if !slices.ContainsFunc(c.Results, func(m Metrics) bool { return m.Residency != nil }) {
		return nil
	}
	fmt.Fprintf(w, "\nresidency\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%-*s\t", width, "policy")
	fmt.Fprintln(tw, "boundaries\trestartable\tteardowns\tremats\tstate captured\tstored\tmem reclaimed\toverhead\t")
	for _, m := range c.Results {
		r := m.Residency
		if r == nil {
			continue
		}
		fmt.Fprintf(tw, "%-*s\t%d\t%.1f%%\t%d\t%d\t%s\t%s\t%s\t%s\t\n", width, m.Policy,
			r.Boundaries, 100*r.RestartableShare, r.Teardowns, r.Rematerializations,
			units.FormatSize(r.StateBytes), units.FormatSize(r.BytesCaptured), units.FormatSize(r.MemoryReclaimed), seconds(r.OverheadS))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("writing residency table: %w", err)
	}
	return nil
}

func seconds(s float64) string { return fmt.Sprintf("%.1f s", s) }

// ratio renders a ratio as "2.31x", "-" when unknown (0).
func ratio(r float64) string {
	if r == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", r)
}
