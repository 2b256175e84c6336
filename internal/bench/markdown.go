package bench

import (
	"fmt"
	"io"
	"strconv"
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
		why := "interrupted"
		if !r.Interrupted {
			why = "a checkpoint: the run goes on, or stopped; tenon bench --resume with this file's JSON goes on from it"
		}
		status = fmt.Sprintf("**PARTIAL**: %d of %d cases ran (%s)", r.Finished(), r.Cases, why)
	}
	dirty := ""
	if meta.Dirty {
		dirty = " (working tree dirty)"
	}
	fmt.Fprintf(b, "Command (as root, from the repository root):\n\n    %s\n\n", meta.Command)
	fmt.Fprintf(b, "- commit: `%s`%s\n- machine: %s\n- backend: %s\n", meta.Commit, dirty, meta.Machine, meta.Backend)
	fmt.Fprintf(b, "- started %s, took %s\n- status: %s\n", meta.Started.UTC().Format("2006-01-02 15:04 UTC"), meta.Wall.Round(1e9), status)
	if meta.Resumed != "" {
		fmt.Fprintf(b, "- resumed: %s\n", meta.Resumed)
	}
	if r.BestStatic != "" && r.usesBestStatic() {
		fmt.Fprintf(b, "- best static: %s (%s)\n", r.BestStatic, r.BestStaticWhy)
	}
	b.WriteString("\n## Goals\n\n")
	if goals := Goals(r); Judged(goals) {
		b.WriteString("From the headline case (tightest budget, headline workload) and the static sweep, judged on the medians over the repetitions of each case; min and max are the goal computed from each repetition alone.\n\n")
		b.WriteString("| goal | target | measured (median) | status |\n| --- | --- | --- | --- |\n")
		for _, g := range goals {
			fmt.Fprintf(b, "| %s | %s | %s | %s |\n", g.Name, g.Target, g.Measured, g.Status())
		}
	} else {
		b.WriteString(NotJudged + "\n")
	}
	b.WriteString("\n## Cases\n\nMakespan and latency (P50/P95, retries included) are over every workflow: a workflow that never completed has no latency, so the makespan of a run that left one unfinished, and a percentile that falls on one, are dnf (did not finish). Goodput is completed workflows per hour of the run (on the replay's clock, at its time scale). Then makespan / lower bound, tenon's speedup over each policy (its makespan / tenon's; \"did not finish N of M\" instead of a ratio when either left work unfinished), peak domain memory, OOM kills, sandbox timeouts, the attempt failure rate (failed attempts / attempts) and success (completed / workflows).\n")
	for _, o := range r.Outcomes {
		writeCase(b, o, meta.Machine)
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

// writeCase writes o's section; machine is the run's (Meta.Machine), and
// a case that ran on another host says which.
func writeCase(b *strings.Builder, o Outcome, machine string) {
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
	if n := len(o.Reps); c.Reps > n {
		fmt.Fprintf(b, ", %d of %d repetitions", n, c.Reps)
	} else if n > 1 {
		fmt.Fprintf(b, ", %d repetitions", n)
	}
	if len(o.Reps) > 1 {
		b.WriteString(" (medians, min–max in parentheses)")
	}
	fmt.Fprintf(b, ", took %s", o.Wall.Round(1e9))
	if o.Resumed {
		b.WriteString(" (in the earlier run this one resumed)")
	} else if o.ResumedReps > 0 {
		fmt.Fprintf(b, " (with the earlier run this one resumed, which made the first %d)", o.ResumedReps)
	}
	if o.Host != "" && !strings.HasPrefix(machine, o.Host) {
		fmt.Fprintf(b, ", on another machine: %s", o.Host)
	}
	b.WriteString("\n")
	if o.Err != nil {
		fmt.Fprintf(b, "\n**error**: %v\n", o.Err)
	}
	if o.Comparison == nil || len(o.Comparison.Results) == 0 {
		return
	}
	tenon, hasTenon := o.Comparison.Policy("tenon")
	b.WriteString("\n| policy | makespan | goodput | / bound | tenon speedup | P50 | P95 | peak mem | OOM | timeouts | fail rate | success |\n")
	b.WriteString("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, m := range o.Comparison.Results {
		sp := "-"
		if hasTenon && m.Policy != "tenon" {
			sp = report.VersusText(report.Speedup(tenon, m))
		}
		sd := m.Spread
		if sd == nil {
			sd = &report.Spread{}
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			m.Policy, spreadS(m, m.MakespanS, sd.MakespanS), spreadF(m, report.Goodput, m.GoodputPerHour, sd.GoodputPerHour),
			report.Ratio(m.OverLowerBound), sp, spreadS(m, m.P50S, sd.P50S), spreadS(m, m.P95S, sd.P95S),
			spreadF(m, func(v float64) string { return units.FormatSize(int64(v)) }, float64(m.PeakBytes), sd.PeakBytes),
			spreadF(m, count, float64(m.OOMEvents), sd.OOMEvents), spreadF(m, count, float64(m.Timeouts), sd.Timeouts),
			spreadF(m, percent, m.AttemptFailureRate, sd.AttemptFailureRate), successText(m))
	}
	writeActionPeaks(b, o)
}

// spreadS renders a median time with its min–max over the repetitions:
// "22.0 s (20.0 s–25.0 s)"; the median alone for one run.
func spreadS(m report.Metrics, med report.Seconds, span [2]report.Seconds) string {
	if m.Reps <= 1 || m.Spread == nil {
		return med.String()
	}
	return fmt.Sprintf("%s (%s–%s)", med, span[0], span[1])
}

// spreadF is spreadS for other metrics, rendered by f.
func spreadF(m report.Metrics, f func(float64) string, med float64, span [2]float64) string {
	if m.Reps <= 1 || m.Spread == nil {
		return f(med)
	}
	return fmt.Sprintf("%s (%s–%s)", f(med), f(span[0]), f(span[1]))
}

func count(v float64) string   { return strconv.FormatFloat(v, 'f', -1, 64) }
func percent(v float64) string { return fmt.Sprintf("%.1f%%", 100*v) }

func successText(m report.Metrics) string {
	if m.Workflows == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%% (%d/%d)", 100*float64(m.Completed)/float64(m.Workflows), m.Completed, m.Workflows)
}
