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
	fmt.Fprintln(tw, "makespan\tgoodput\tvs eager\t/ bound\tP50\tP95\tpeak mem\t/ budget\tOOM\ttimeouts\tattempts\tfail rate\tdone\t")
	dnf := false
	for _, m := range c.Results {
		dnf = dnf || m.Unfinished > 0
		fmt.Fprintf(tw, "%-*s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%.1f%%\t%s\t\n",
			width, m.Policy, m.MakespanS, Goodput(m.GoodputPerHour), VersusText(m.SpeedupVsEager, m.VsEagerDidNotFinish),
			Ratio(m.OverLowerBound), m.P50S, m.P95S, units.FormatSize(m.PeakBytes), Ratio(m.PeakOverBudget),
			m.OOMEvents, m.Timeouts, m.Attempts, 100*m.AttemptFailureRate, Done(m))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("writing report table: %w", err)
	}
	for _, m := range c.Results {
		if m.Infeasible > 0 {
			fmt.Fprintf(w, "\ninfeasible: %d of %d workflows peak above the budget; no policy can complete them, so\nthey are never started and are left out of makespan and percentiles.\n", m.Infeasible, m.Workflows)
			break
		}
	}
	if dnf {
		fmt.Fprintln(w, "\ndnf: did not finish. A workflow that never completed has no latency: the makespan of a run that\nleft one unfinished, and a percentile that falls on one, are dnf. Goodput is completed workflows\nper hour of the run.")
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
	fmt.Fprintln(tw, "boundaries\trestartable\tteardowns\tremats\tstate captured\tstored\tmem reclaimed\tpage-outs\tfreed by page-out\toverhead\t")
	for _, m := range c.Results {
		r := m.Residency
		if r == nil {
			continue
		}
		fmt.Fprintf(tw, "%-*s\t%d\t%.1f%%\t%d\t%d\t%s\t%s\t%s\t%d\t%s\t%s\t\n", width, m.Policy,
			r.Boundaries, 100*r.RestartableShare, r.Teardowns, r.Rematerializations,
			units.FormatSize(r.StateBytes), units.FormatSize(r.BytesCaptured), units.FormatSize(r.MemoryReclaimed),
			r.PageOuts, units.FormatSize(r.FreedByPageOut), seconds(r.OverheadS+r.PageS))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("writing residency table: %w", err)
	}
	return nil
}

func seconds(s float64) string { return fmt.Sprintf("%.1f s", s) }

// Goodput renders completed workflows per hour: "123.4/h".
func Goodput(perHour float64) string { return fmt.Sprintf("%.1f/h", perHour) }

// VersusText renders a comparison of makespans: the ratio ("2.31x"), or
// the did-not-finish text (see Speedup) when either run left work
// unfinished, "-" when neither is known.
func VersusText(ratio float64, dnf string) string {
	if dnf != "" {
		return dnf
	}
	return Ratio(ratio)
}

// Ratio renders a ratio as "2.31x", "-" when unknown (0).
func Ratio(r float64) string {
	if r == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", r)
}

// Done is the completed share, e.g. "8/12", or "8/11 (+1 infeasible)".
func Done(m Metrics) string {
	if m.Infeasible > 0 {
		return fmt.Sprintf("%d/%d (+%d infeasible)", m.Completed, m.Workflows-m.Infeasible, m.Infeasible)
	}
	return fmt.Sprintf("%d/%d", m.Completed, m.Workflows)
}

// WriteAgents writes, per policy with residency, what residency did to
// each agent's sandbox: its floor (largest working set at a boundary),
// boundaries and the restartable ones, teardowns, page-outs and the
// memory they freed.
func WriteAgents(w io.Writer, c *Comparison) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	for _, m := range c.Results {
		if m.Residency == nil || len(m.Residency.Agents) == 0 {
			continue
		}
		fmt.Fprintf(tw, "\nper agent: %s\t\t\t\t\t\t\n", m.Policy)
		fmt.Fprintln(tw, "workflow\tfloor\tboundaries\trestartable\tteardowns\tpage-outs\tfreed by page-out\t")
		for _, a := range m.Residency.Agents {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%s\t\n", a.Workflow, units.FormatSize(a.Floor),
				a.Boundaries, a.Restartable, a.Teardowns, a.PageOuts, units.FormatSize(a.FreedByPageOut))
		}
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("writing the per-agent residency table: %w", err)
	}
	return nil
}
