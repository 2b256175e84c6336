package bench

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/units"
)

// replicaSuffix is what trajectory.Replicate appends to a workflow id.
var replicaSuffix = regexp.MustCompile(`-r\d+$`)

// writeActionPeaks writes, for a case with reference peaks (real-tools),
// every action of each workflow with its profiled peak, the reference
// figure of its workflow, and the peaks measured across every replica,
// policy and repetition that ran it (median and max of the sandbox's
// memory during the action).
func writeActionPeaks(b *strings.Builder, o Outcome) {
	c := o.Case
	if c.ReferenceMiB == nil {
		return
	}
	measured := map[string][][]int64{} // workflow id before replication -> action -> peaks
	for _, cmp := range o.Reps {
		for _, r := range cmp.Runs() {
			for _, w := range r.Workflows {
				id := replicaSuffix.ReplaceAllString(w.ID, "")
				for i, p := range w.ActionPeaks {
					if p <= 0 {
						continue
					}
					for len(measured[id]) <= i {
						measured[id] = append(measured[id], nil)
					}
					measured[id][i] = append(measured[id][i], p)
				}
			}
		}
	}
	b.WriteString("\n#### Per-action peaks\n\nEach action's profiled peak (the trace's, capped at the manifest's figure), the manifest's figure for its task, and the peak of its sandbox's memory while it ran, measured: median and max over every replica, policy and repetition that ran it (n).\n\n")
	b.WriteString("| task | # | class | command | profile | manifest | measured median | measured max | n |\n")
	b.WriteString("| --- | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: |\n")
	seen := map[string]bool{}
	for _, w := range c.Workflows {
		id := replicaSuffix.ReplaceAllString(w.ID, "")
		if seen[id] {
			continue
		}
		seen[id] = true
		for i, a := range w.Actions {
			var ps []int64
			if i < len(measured[id]) {
				ps = slices.Clone(measured[id][i])
			}
			med, mx := "-", "-"
			if len(ps) > 0 {
				slices.Sort(ps)
				med, mx = mib(ps[len(ps)/2]), mib(ps[len(ps)-1])
			}
			fmt.Fprintf(b, "| %s | %d | %s | %s | %.1f MiB | %.0f MiB | %s | %s | %d |\n",
				id, i, a.Class, cell(a), a.PeakMiB(), c.ReferenceMiB[id], med, mx, len(ps))
		}
	}
}

// cell is an action's command for a table cell: one line, at most 60
// bytes, pipes escaped.
func cell(a trajectory.Action) string {
	s := strings.Join(strings.Fields(a.Command), " ")
	if len(s) > 60 {
		n := 57
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n] + "..."
	}
	return "`" + strings.ReplaceAll(s, "|", `\|`) + "`"
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/float64(units.MiB)) }
