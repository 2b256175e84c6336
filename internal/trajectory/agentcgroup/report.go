package agentcgroup

import (
	"fmt"
	"io"
	"math"
	"sort"
)

// SkippedRun is a run the importer did not turn into a workflow, and why.
type SkippedRun struct {
	Run    string
	Reason string
}

// Report summarizes an import.
type Report struct {
	Runs          int          // run directories found
	Imported      int          // workflows produced
	Skipped       int          // runs skipped (len(SkippedRuns))
	SkippedRuns   []SkippedRun // which and why
	Warnings      Warnings     // what imported runs lacked or held wrong, by kind
	Actions       int          // actions over all workflows
	Boundaries    int          // action boundaries (trajectory.Workflow.RestartableBoundaries)
	Restartable   int          // boundaries with no background process alive
	MedianPeakMiB float64      // median recorded action peak
	P95PeakMiB    float64      // 95th percentile recorded action peak
	MaxPeakMiB    float64      // largest recorded action peak
	MedianWaitS   float64      // median model wait before an action
}

// Print writes the report for people.
func (r Report) Print(w io.Writer) error {
	p := &printer{w: w}
	p.printf("runs %d, imported %d, skipped %d\n", r.Runs, r.Imported, r.Skipped)
	for _, s := range r.SkippedRuns {
		p.printf("  skipped %s: %s\n", s.Run, s.Reason)
	}
	if len(r.Warnings) == 0 {
		p.printf("warnings: none\n")
	} else {
		p.printf("warnings: %s\n", r.Warnings)
	}
	p.printf("restartable boundaries: %d of %d (%.1f %%)\n", r.Restartable, r.Boundaries, 100*r.RestartableShare())
	p.printf("actions %d\n"+
		"action peak MiB: median %.1f, P95 %.1f, max %.1f\n"+
		"model wait s: median %.2f\n",
		r.Actions, r.MedianPeakMiB, r.P95PeakMiB, r.MaxPeakMiB, r.MedianWaitS)
	return p.err
}

// RestartableShare is the share of action boundaries with no background
// process alive, where a sandbox is restart-safe; 0 without boundaries.
func (r Report) RestartableShare() float64 {
	if r.Boundaries == 0 {
		return 0
	}
	return float64(r.Restartable) / float64(r.Boundaries)
}

// printer keeps the first write error.
type printer struct {
	w   io.Writer
	err error
}

func (p *printer) printf(format string, a ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, a...)
	}
}

// Quantile is the q-quantile (0..1) of xs by linear interpolation between
// order statistics; NaN for an empty slice. xs is not modified.
func Quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	pos := q * float64(len(s)-1)
	i := int(math.Floor(pos))
	if i >= len(s)-1 {
		return s[len(s)-1]
	}
	return s[i] + (pos-float64(i))*(s[i+1]-s[i])
}
