package specs

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	bf "github.com/tracecast/tracecast/backfill"
	"github.com/tracecast/tracecast/internal/svgpanels"
)

// policyColors are the value plot's colours, in bf.Policies' order.
var policyColors = []color.Color{
	color.RGBA{R: 127, G: 127, B: 127, A: 255}, color.RGBA{R: 214, G: 39, B: 40, A: 255},
	color.RGBA{R: 255, G: 127, B: 14, A: 255}, color.RGBA{R: 148, G: 103, B: 189, A: 255},
	color.RGBA{R: 140, G: 86, B: 75, A: 255}, color.RGBA{R: 31, G: 119, B: 180, A: 255},
	color.RGBA{R: 44, G: 160, B: 44, A: 255}, color.RGBA{R: 0, G: 0, B: 0, A: 255},
}

// clipV is how far below 0 the value plot goes: greedy's V reaches −1000
// on StarPU traces in wait mode, which would flatten every other curve.
const clipV = -1.0

// WriteValuePlot draws V(α) on a log axis, one curve per policy and one
// panel per task length, as SVG: values below −1 are drawn at −1 (the
// table has them).
func WriteValuePlot(w io.Writer, res *bf.Result) error {
	var ds []float64
	for _, r := range res.Rows {
		if !slices.Contains(ds, r.D) {
			ds = append(ds, r.D)
		}
	}
	if len(ds) == 0 {
		return errors.New("no backfill result to plot")
	}
	return svgpanels.Write(w, len(ds), func(i int) (*plot.Plot, error) {
		d := ds[i]
		p := plot.New()
		p.Title.Text = fmt.Sprintf("value of backfilling, tasks of %g s (V below %g drawn at %g)", d, clipV, clipV)
		p.X.Label.Text = "α (cost of a second of waste or delay, in seconds of back-end work)"
		p.Y.Label.Text = "V(α)"
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{}
		p.Y.Min, p.Y.Max = clipV, 1
		// A fixed range: autoscaling one α would reach 0, not on a log axis.
		p.X.Min, p.X.Max = math.Inf(1), math.Inf(-1)
		for _, r := range res.Rows {
			if r.Alpha > 0 {
				p.X.Min, p.X.Max = math.Min(p.X.Min, r.Alpha/2), math.Max(p.X.Max, r.Alpha*2)
			}
		}
		p.Add(plotter.NewGrid())
		for k, pol := range bf.Policies {
			var xys plotter.XYs
			for _, r := range res.Rows {
				if r.D == d && r.Policy == pol && !math.IsNaN(r.Value) && r.Alpha > 0 {
					xys = append(xys, plotter.XY{X: r.Alpha, Y: math.Max(r.Value, clipV)})
				}
			}
			if len(xys) == 0 {
				continue
			}
			slices.SortFunc(xys, func(a, b plotter.XY) int {
				switch {
				case a.X < b.X:
					return -1
				case a.X > b.X:
					return 1
				}
				return 0
			})
			l, pts, err := plotter.NewLinePoints(xys)
			if err != nil {
				return nil, err
			}
			l.Color, pts.Color = policyColors[k], policyColors[k]
			p.Add(l, pts)
			p.Legend.Add(pol, l, pts)
		}
		p.Legend.Top, p.Legend.Left = false, false
		return p, nil
	})
}
