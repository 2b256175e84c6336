package bench

import (
	"fmt"
	"image/color"
	"io"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/tenon-dev/tenon/internal/report"
	"github.com/tenon-dev/tenon/internal/units"
)

// Plot size.
const (
	plotWidth  = 9 * vg.Inch
	plotHeight = 7 * vg.Inch
)

// PlotFunc draws one figure from the results; ok is false when the results
// hold nothing for it (its group did not run).
type PlotFunc func(w io.Writer, r *Results) (ok bool, err error)

// Plots maps each plot file suffix to its drawing function.
var Plots = map[string]PlotFunc{
	PlotWorkloads: WriteWorkloadsPlot,
	PlotAblation:  WriteAblationPlot,
	PlotLoad:      WriteLoadPlot,
	PlotRegion:    WriteRegionPlot,
}

func outcomesIn(r *Results, group string) []Outcome {
	var out []Outcome
	for _, o := range r.Outcomes {
		if o.Case.Group == group && o.Comparison != nil && len(o.Comparison.Results) > 0 {
			out = append(out, o)
		}
	}
	return out
}

// policyPalette fixes each policy's colour across the panels and plots of
// one bench (plotutil's palette index; static-N share one). The ablations
// wrap around the 7-colour palette onto colours no other series of the
// ablation plot uses.
var policyPalette = []string{"eager", "static", "agent-reservation", "agentcgroup", "gate", "admission", "tenon",
	"tenon-no-admission", "tenon-no-gate", "tenon-always-resident", "tenon-static-pred", "tenon-history-pred"}

// policyColor is name's colour, or the i-th palette colour for a series
// that is not a policy.
func policyColor(name string, i int) color.Color {
	if strings.HasPrefix(name, "static-") {
		name = "static"
	}
	if k := slices.Index(policyPalette, name); k >= 0 {
		return plotutil.Color(k)
	}
	return plotutil.Color(i)
}

// bars is a grouped bar chart: one bar group per label, one bar per series.
type bars struct {
	title, ylabel string
	labels        []string
	series        []string
	value         func(label, series string) (float64, bool)
}

func (b bars) plot() (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = b.title
	p.Y.Label.Text = b.ylabel
	p.Legend.Top = true
	w := vg.Points(max(4, 60/float64(max(1, len(b.series)))))
	for i, s := range b.series {
		vals := make(plotter.Values, len(b.labels))
		for j, l := range b.labels {
			vals[j], _ = b.value(l, s)
		}
		bc, err := plotter.NewBarChart(vals, w)
		if err != nil {
			return nil, fmt.Errorf("plotting %s: %w", s, err)
		}
		bc.LineStyle.Width = 0
		bc.Color = policyColor(s, i)
		bc.Offset = w * vg.Length(float64(i)-float64(len(b.series)-1)/2)
		p.Add(bc)
		if len(b.series) > 1 {
			p.Legend.Add(s, bc)
		}
	}
	p.NominalX(b.labels...)
	p.Y.Min = 0
	if len(b.series) > 1 {
		p.X.Max += 1.3 // an empty slot on the right for the legend
	}
	return p, nil
}

// column stacks plots vertically into one PNG.
func column(w io.Writer, plots ...*plot.Plot) error {
	img := vgimg.New(plotWidth, plotHeight)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: len(plots), Cols: 1, PadY: vg.Millimeter * 4, PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 4}
	grid := make([][]*plot.Plot, len(plots))
	for i, p := range plots {
		grid[i] = []*plot.Plot{p}
	}
	canvases := plot.Align(grid, tiles, dc)
	for i, p := range plots {
		p.Draw(canvases[i][0])
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(w); err != nil {
		return fmt.Errorf("writing plot: %w", err)
	}
	return nil
}

// WriteWorkloadsPlot draws makespan per policy per workload, one panel per
// budget (seed 000 Figure 9).
func WriteWorkloadsPlot(w io.Writer, r *Results) (bool, error) {
	outs := outcomesIn(r, GroupMain)
	if len(outs) == 0 {
		return false, nil
	}
	var budgets []int64
	for _, o := range outs {
		if !slices.Contains(budgets, o.Case.Budget) {
			budgets = append(budgets, o.Case.Budget)
		}
	}
	slices.Sort(budgets)
	var panels []*plot.Plot
	for _, b := range budgets {
		var labels, series []string
		vals := map[[2]string]float64{}
		for _, o := range outs {
			if o.Case.Budget != b {
				continue
			}
			labels = append(labels, o.Case.Workload)
			for _, m := range o.Comparison.Results {
				if !slices.Contains(series, m.Policy) {
					series = append(series, m.Policy)
				}
				if m.MakespanS.Finite() { // no bar for a run that did not finish
					vals[[2]string{o.Case.Workload, m.Policy}] = float64(m.MakespanS)
				}
			}
		}
		p, err := bars{
			title:  fmt.Sprintf("makespan per workload, budget %s", units.FormatSize(b)),
			ylabel: "makespan (s)", labels: labels, series: series,
			value: func(l, s string) (float64, bool) { v, ok := vals[[2]string{l, s}]; return v, ok },
		}.plot()
		if err != nil {
			return false, err
		}
		panels = append(panels, p)
	}
	return true, column(w, panels...)
}

// WriteAblationPlot draws makespan and OOM kills of tenon and each ablation
// (seed 000 Figure 11 / Table 4), a pair of panels per ablation case: the
// workloads' scales differ (tens against hundreds of seconds). A case run
// without tenon (before 4b7e536) is drawn beside the headline case's tenon
// where it is the headline's workload and budget.
func WriteAblationPlot(w io.Writer, r *Results) (bool, error) {
	outs := outcomesIn(r, GroupAblation)
	if len(outs) == 0 {
		return false, nil
	}
	h := r.Headline()
	var panels []*plot.Plot
	for _, o := range outs {
		ms := map[string]float64{}
		ooms := map[string]float64{}
		var labels []string
		add := func(m report.Metrics) {
			labels = append(labels, m.Policy)
			if m.MakespanS.Finite() { // no bar for a run that did not finish
				ms[m.Policy] = float64(m.MakespanS)
			}
			ooms[m.Policy] = float64(m.OOMEvents)
		}
		if _, own := o.Comparison.Policy("tenon"); !own && h != nil && h.Case.Workload == o.Case.Workload && h.Case.Budget == o.Case.Budget {
			if m, ok := h.Comparison.Policy("tenon"); ok {
				add(m)
			}
		}
		for _, m := range o.Comparison.Results {
			add(m)
		}
		one := func(title, y string, vals map[string]float64) (*plot.Plot, error) {
			return bars{title: title, ylabel: y, labels: labels, series: []string{y},
				value: func(l, _ string) (float64, bool) { v, ok := vals[l]; return v, ok }}.plot()
		}
		p1, err := one("ablation: "+o.Case.Name, "makespan (s)", ms)
		if err != nil {
			return false, err
		}
		p2, err := one("", "OOM kills", ooms)
		if err != nil {
			return false, err
		}
		panels = append(panels, p1, p2)
	}
	return true, column(w, panels...)
}

// sweep is a line plot over a swept variable, one line per policy.
func sweep(title, xlabel string, outs []Outcome, policies func(string) bool) (mk, oom *plot.Plot, err error) {
	mk, oom = plot.New(), plot.New()
	mk.Title.Text, mk.X.Label.Text, mk.Y.Label.Text = title, xlabel, "makespan (s)"
	oom.X.Label.Text, oom.Y.Label.Text = xlabel, "OOM kills"
	mk.Legend.Top, oom.Legend.Top = true, true
	lines := map[string][2]plotter.XYs{}
	var order []string
	for _, o := range outs {
		for _, m := range o.Comparison.Results {
			if !policies(m.Policy) {
				continue
			}
			if _, ok := lines[m.Policy]; !ok {
				order = append(order, m.Policy)
			}
			l := lines[m.Policy]
			if m.MakespanS.Finite() { // no point for a run that did not finish
				l[0] = append(l[0], plotter.XY{X: o.Case.X, Y: float64(m.MakespanS)})
			}
			l[1] = append(l[1], plotter.XY{X: o.Case.X, Y: float64(m.OOMEvents)})
			lines[m.Policy] = l
		}
	}
	for i, name := range order {
		for k, p := range []*plot.Plot{mk, oom} {
			xys := lines[name][k]
			if len(xys) == 0 {
				continue // no run of this policy finished
			}
			slices.SortFunc(xys, func(a, b plotter.XY) int { return cmpFloat(a.X, b.X) })
			l, s, err := plotter.NewLinePoints(xys)
			if err != nil {
				return nil, nil, fmt.Errorf("plotting %s: %w", name, err)
			}
			l.Color, s.Color = policyColor(name, i), policyColor(name, i)
			s.Shape = plotutil.Shape(i)
			p.Add(l, s)
			p.Legend.Add(name, l, s)
		}
	}
	mk.Y.Min, oom.Y.Min = 0, 0
	oom.Y.Max = max(oom.Y.Max, 1)
	return mk, oom, nil
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// WriteLoadPlot draws makespan and OOM kills against oversubscription for
// Eager, the best static and tenon: the load sweep plus the headline case
// as its last point (seed 000 Figure 13).
func WriteLoadPlot(w io.Writer, r *Results) (bool, error) {
	outs := outcomesIn(r, GroupLoad)
	if len(outs) == 0 {
		return false, nil
	}
	if h := r.Headline(); h != nil && h.Comparison != nil {
		hc := *h
		hc.Case.X = h.Comparison.Oversubscription
		outs = append(outs, hc)
	}
	pols := map[string]bool{}
	for _, o := range outcomesIn(r, GroupLoad) {
		for _, m := range o.Comparison.Results {
			pols[m.Policy] = true
		}
	}
	mk, oom, err := sweep("offered load: "+outs[0].Case.Workload+" at "+units.FormatSize(outs[0].Case.Budget), "oversubscription (sum of profiled peaks / budget)", outs, func(p string) bool { return pols[p] })
	if err != nil {
		return false, err
	}
	return true, column(w, mk, oom)
}

// WriteRegionPlot draws tenon's makespan and OOM kills against the yellow =
// red region size (seed 000 Figure 14).
func WriteRegionPlot(w io.Writer, r *Results) (bool, error) {
	outs := outcomesIn(r, GroupRegion)
	if len(outs) == 0 {
		return false, nil
	}
	for i := range outs {
		outs[i].Case.X *= 100
	}
	mk, oom, err := sweep("tenon vs yellow/red region size", "yellow = red region (% of budget)", outs, func(string) bool { return true })
	if err != nil {
		return false, err
	}
	return true, column(w, mk, oom)
}
