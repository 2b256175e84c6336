package report

import (
	"fmt"
	"io"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/tenon-dev/tenon/internal/units"
)

// Plot size.
const (
	PlotWidth  = 8 * vg.Inch
	PlotHeight = 7 * vg.Inch
)

// WritePlot draws domain memory (top panel, with the budget as a dashed
// horizontal line) and running actions (bottom panel) over time, one line
// per policy, as a PNG (seed 000 Figure 11).
func WritePlot(w io.Writer, c *Comparison) error {
	mem := plot.New()
	mem.Title.Text = fmt.Sprintf("domain memory (budget %s, oversubscription %.2fx)", units.FormatSize(c.BudgetBytes), c.Oversubscription)
	mem.X.Label.Text = "time (s)"
	mem.Y.Label.Text = "memory (GiB)"
	mem.Legend.Top = true
	conc := plot.New()
	conc.Title.Text = "running actions"
	conc.X.Label.Text = "time (s)"
	conc.Y.Label.Text = "actions"
	conc.Legend.Top = true

	var tmax float64
	for i, r := range c.results {
		memXY := make(plotter.XYs, len(r.Samples))
		concXY := make(plotter.XYs, len(r.Samples))
		for j, s := range r.Samples {
			t := s.T.Seconds()
			tmax = max(tmax, t)
			memXY[j] = plotter.XY{X: t, Y: float64(s.MemBytes) / float64(units.GiB)}
			concXY[j] = plotter.XY{X: t, Y: float64(s.Running)}
		}
		if len(r.Samples) == 0 {
			continue
		}
		for _, pl := range []struct {
			p   *plot.Plot
			xys plotter.XYs
		}{{mem, memXY}, {conc, concXY}} {
			l, err := plotter.NewLine(pl.xys)
			if err != nil {
				return fmt.Errorf("plotting %s: %w", r.Policy, err)
			}
			l.Color = plotutil.Color(i)
			l.Width = vg.Points(1.2)
			pl.p.Add(l)
			pl.p.Legend.Add(r.Policy, l)
		}
	}
	if c.BudgetBytes > 0 {
		b, err := plotter.NewLine(plotter.XYs{{X: 0, Y: float64(c.BudgetBytes) / float64(units.GiB)}, {X: max(tmax, 1), Y: float64(c.BudgetBytes) / float64(units.GiB)}})
		if err != nil {
			return fmt.Errorf("plotting budget: %w", err)
		}
		b.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		b.Width = vg.Points(1)
		mem.Add(b)
		mem.Legend.Add("budget", b)
		mem.Y.Max = max(mem.Y.Max, float64(c.BudgetBytes)/float64(units.GiB))
	}
	mem.Y.Min, conc.Y.Min = 0, 0
	// Both panels share the time axis (same range, so the same ticks), and
	// the y ranges leave the top of each panel to its legend, clear of the lines.
	mem.X.Min, conc.X.Min = 0, 0
	mem.X.Max, conc.X.Max = max(tmax, 1), max(tmax, 1)
	mem.Y.Max *= 1.45
	conc.Y.Max = max(conc.Y.Max, 1) * 1.35

	img := vgimg.New(PlotWidth, PlotHeight)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 2, Cols: 1, PadY: vg.Millimeter * 4, PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 4}
	canvases := plot.Align([][]*plot.Plot{{mem}, {conc}}, tiles, dc)
	mem.Draw(canvases[0][0])
	conc.Draw(canvases[1][0])
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(w); err != nil {
		return fmt.Errorf("writing plot: %w", err)
	}
	return nil
}
