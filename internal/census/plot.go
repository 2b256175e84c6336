package census

import (
	"fmt"
	"image/color"
	"io"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/tenon-dev/tenon/internal/units"
)

// classColors follow the seed's Figure 2: file page cache, anonymous equal
// to a file block, heap present at birth, heap grown later.
var classColors = []color.RGBA{
	{R: 0x4c, G: 0x72, B: 0xb0, A: 0xff},
	{R: 0xdd, G: 0x84, B: 0x52, A: 0xff},
	{R: 0x80, G: 0x80, B: 0x80, A: 0xff},
	{R: 0x55, G: 0xa8, B: 0x68, A: 0xff},
}

var classNames = []string{"file same content", "anon = file block", "heap at birth", "heap later"}

// WritePlot draws one stacked bar per sample (duplicate split by class),
// labelled with the duplicate's share of real occupancy, as a PNG.
func WritePlot(w io.Writer, samples []SampleResult, title string) error {
	p := plot.New()
	p.Title.Text = title
	unit, uname := float64(units.MiB), "MiB"
	var top int64
	for _, r := range samples {
		top = max(top, r.DuplicateBytes)
	}
	if top >= units.GiB {
		unit, uname = float64(units.GiB), "GiB"
	}
	p.Y.Label.Text = "unshared duplicate (" + uname + ")"
	names := make([]string, len(samples))
	vals := make([]plotter.Values, len(classNames))
	for i := range vals {
		vals[i] = make(plotter.Values, len(samples))
	}
	labels := plotter.XYLabels{XYs: make(plotter.XYs, len(samples)), Labels: make([]string, len(samples))}
	for i, r := range samples {
		names[i] = fmt.Sprintf("%s N=%d t=%.0fs", r.Config, r.N, r.TimeS)
		c := []int64{r.Classes.FileSameContent, r.Classes.AnonEqualsFile, r.Classes.HeapBirth, r.Classes.HeapLater}
		for k := range c {
			vals[k][i] = float64(c[k]) / unit
		}
		labels.XYs[i] = plotter.XY{X: float64(i), Y: float64(r.DuplicateBytes) / unit}
		labels.Labels[i] = fmt.Sprintf("%.1f%%", 100*r.Share(r.DuplicateBytes))
	}
	var below *plotter.BarChart
	for k := range vals {
		b, err := plotter.NewBarChart(vals[k], vg.Points(28))
		if err != nil {
			return fmt.Errorf("plotting census: %w", err)
		}
		b.Color = classColors[k]
		b.LineStyle.Width = 0
		if below != nil {
			b.StackOn(below)
		}
		below = b
		p.Add(b)
		p.Legend.Add(classNames[k], b)
	}
	if len(samples) > 0 {
		l, err := plotter.NewLabels(labels)
		if err != nil {
			return fmt.Errorf("plotting census labels: %w", err)
		}
		for i := range l.TextStyle {
			l.TextStyle[i].XAlign = -0.5
			l.TextStyle[i].YAlign = 0
		}
		p.Add(l)
	}
	p.Legend.Top = true
	p.NominalX(names...)
	p.X.Tick.Label.Rotation = 0.5
	p.X.Tick.Label.XAlign = -1
	wd := vg.Length(160 + 60*len(samples))
	wt, err := p.WriterTo(max(wd, 320), 300, "png")
	if err != nil {
		return fmt.Errorf("rendering census plot: %w", err)
	}
	if _, err := wt.WriteTo(w); err != nil {
		return fmt.Errorf("writing census plot: %w", err)
	}
	return nil
}
