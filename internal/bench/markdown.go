package bench

import (
	"fmt"
	"io"
	"strings"

	"github.com/tenon-dev/tenon/internal/report"
	"github.com/tenon-dev/tenon/internal/units"
)

// WriteMarkdown writes the results file: how the run was made, the goals,
// one table per case, and links to the plots named in plots (file names
// relative to the Markdown file).
func WriteMarkdown(w io.Writer, meta Meta, r *Results, plots []string) error {
	b := &strings.Builder{}
	fmt.Fprintf(b, "# tenon bench: %s\n\n", meta.Name)
	status := "complete"
	if r.Partial() {
		status = fmt.Sprintf("**PARTIAL**: %d of %d cases ran (interrupted)", len(r.Outcomes), r.Cases)
	}
	dirty := ""
	if meta.Dirty {
		dirty = " (working tree dirty)"
	}
	fmt.Fprintf(b, "Command (as root, from the repository root):\n\n    %s\n\n", meta.Command)
	fmt.Fprintf(b, "- commit: `%s`%s\n- machine: %s\n- backend: %s\n", meta.Commit, dirty, meta.Machine, meta.Backend)
	fmt.Fprintf(b, "- started %s, took %s\n- status: %s\n", meta.Started.UTC().Format("2006-01-02 15:04 UTC"), meta.Wall.Round(1e9), status)
	if r.BestStatic != "" && r.usesBestStatic() {
		fmt.Fprintf(b, "- best static: %s (%s)\n", r.BestStatic, r.BestStaticWhy)
	}
	b.WriteString("\n## Goals\n\nFrom the headline case (tightest budget, headline workload) and the static sweep.\n\n")
	b.WriteString("| goal | target | measured | status |\n| --- | --- | --- | --- |\n")
	for _, g := range Goals(r) {
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", g.Name, g.Target, g.Measured, g.Status())
	}
	b.WriteString("\n## Cases\n\nMakespan, latency (P50/P95 of completed workflows, retries included), peak domain memory, OOM kills, timeouts, success (completed / workflows), makespan / lower bound, and tenon's speedup over each policy (its makespan / tenon's) in the same case.\n")
	for _, o := range r.Outcomes {
		writeCase(b, o)
	}
	if len(plots) > 0 {
		b.WriteString("\n## Plots\n\n")
		for _, p := range plots {
			fmt.Fprintf(b, "![%s](%s)\n\n", p, p)
		}
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("writing bench markdown: %w", err)
	}
	return nil
}

func writeCase(b *strings.Builder, o Outcome) {
	c := o.Case
	head := ""
	if c.Headline {
		head = " (headline)"
	}
	fmt.Fprintf(b, "\n### %s%s\n\n", c.Name, head)
	fmt.Fprintf(b, "workload %s, %d workflows, budget %s", c.Workload, len(c.Workflows), units.FormatSize(c.Budget))
	if o.Comparison != nil {
		fmt.Fprintf(b, ", oversubscription %.2fx, lower bound %.1f s", o.Comparison.Oversubscription, o.Comparison.LowerBoundS)
	}
	fmt.Fprintf(b, ", time scale %g", c.TimeScale)
	if len(c.Params) > 0 {
		fmt.Fprintf(b, ", params %v", c.Params)
	}
	fmt.Fprintf(b, ", took %s\n", o.Wall.Round(1e9))
	if o.Err != nil {
		fmt.Fprintf(b, "\n**error**: %v\n", o.Err)
	}
	if o.Comparison == nil || len(o.Comparison.Results) == 0 {
		return
	}
	tenon, hasTenon := metricsOf(o.Comparison, "tenon")
	b.WriteString("\n| policy | makespan | / bound | tenon speedup | P50 | P95 | peak mem | OOM | timeouts | success |\n")
	b.WriteString("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, m := range o.Comparison.Results {
		sp := "-"
		if hasTenon && m.Policy != "tenon" && tenon.MakespanS > 0 {
			sp = fmt.Sprintf("%.2fx", m.MakespanS/tenon.MakespanS)
		}
		fmt.Fprintf(b, "| %s | %.1f s | %s | %s | %.1f s | %.1f s | %s | %d | %d | %s |\n",
			m.Policy, m.MakespanS, ratio(m.OverLowerBound), sp, m.P50S, m.P95S,
			units.FormatSize(m.PeakBytes), m.OOMEvents, m.Timeouts, successText(m))
	}
}

func successText(m report.Metrics) string {
	if m.Workflows == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%% (%d/%d)", 100*float64(m.Completed)/float64(m.Workflows), m.Completed, m.Workflows)
}

func ratio(r float64) string {
	if r == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", r)
}
