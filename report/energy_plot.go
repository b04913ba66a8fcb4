package report

import (
	"fmt"
	"image/color"
	"io"
	"path/filepath"
	"sort"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/internal/output"
	"github.com/tracecast/tracecast/stages/energy"
	"github.com/tracecast/tracecast/stages/signal"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// classColors are the plot colours of idle, compute, comm and other.
var classColors = [energy.NumClasses]color.Color{
	color.RGBA{R: 170, G: 170, B: 170, A: 255},
	color.RGBA{R: 44, G: 160, B: 44, A: 255},
	color.RGBA{R: 255, G: 127, B: 14, A: 255},
	color.RGBA{R: 148, G: 103, B: 189, A: 255},
}

// nodeColors are the plot colours of the nodes' power lines, in node
// order, reused when there are more nodes.
var nodeColors = []color.Color{
	color.RGBA{R: 31, G: 119, B: 180, A: 255}, color.RGBA{R: 214, G: 39, B: 40, A: 255},
	color.RGBA{R: 140, G: 86, B: 75, A: 255}, color.RGBA{R: 23, G: 190, B: 207, A: 255},
}

// WriteEnergyPlots draws energy.{png,svg} and power.{png,svg} in dir.
// series are the nodes' power samples in power time; offset is power time
// minus trace time, seconds.
func WriteEnergyPlots(dir string, res *energy.Result, series map[string][]tracecast.PowerSample, offset float64) error {
	bars, err := energyBars(res)
	if err != nil {
		return err
	}
	if err := saveTiles(filepath.Join(dir, "energy"), [][]*plot.Plot{{bars}}, 8*vg.Inch, 5*vg.Inch); err != nil {
		return err
	}
	top, bottom, err := powerPlots(res, series, offset)
	if err != nil {
		return err
	}
	rows := [][]*plot.Plot{{top}}
	for _, b := range bottom {
		rows = append(rows, []*plot.Plot{b})
	}
	return saveTiles(filepath.Join(dir, "power"), rows, 10*vg.Inch, vg.Length(3+2*len(bottom))*vg.Inch)
}

// energyBars is the energy of each node, stacked by class.
func energyBars(res *energy.Result) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "Energy per node by state class"
	p.Y.Label.Text = "energy (J)"
	names := make([]string, len(res.Totals))
	for i, t := range res.Totals {
		names[i] = t.Node
	}
	var below *plotter.BarChart
	for c := range energy.NumClasses {
		vals := make(plotter.Values, len(res.Totals))
		var nonzero bool
		for i, t := range res.Totals {
			vals[i] = t.ClassEnergy[c]
			nonzero = nonzero || vals[i] > 0
		}
		if !nonzero {
			continue
		}
		b, err := plotter.NewBarChart(vals, vg.Points(40))
		if err != nil {
			return nil, err
		}
		b.Color = classColors[c]
		b.LineStyle.Width = 0
		if below != nil {
			b.StackOn(below)
		}
		below = b
		p.Add(b)
		p.Legend.Add(energy.ClassName(signal.Class(c)), b)
	}
	p.Legend.Top = true
	p.NominalX(names...)
	return p, nil
}

// powerPlots are the power of every node over time and, under it, each
// node's workers by class (stacked: compute, then comm, then other; idle
// is the rest).
func powerPlots(res *energy.Result, series map[string][]tracecast.PowerSample, off float64) (*plot.Plot, []*plot.Plot, error) {
	top := plot.New()
	top.Title.Text = "Power over time"
	top.Y.Label.Text = "power (W)"
	top.X.Label.Text = "time (s, trace)"
	var nodes []string
	for n := range res.Timelines {
		nodes = append(nodes, n)
	}
	sort.Strings(nodes)
	xmin, xmax := 1e300, -1e300
	for _, n := range nodes {
		tl := res.Timelines[n]
		xmin, xmax = min(xmin, tl.T0), max(xmax, tl.End)
	}
	for i, n := range nodes {
		ss := series[n]
		if len(ss) == 0 {
			continue
		}
		// Samples are in power time; plot them in trace time.
		xy := make(plotter.XYs, 0, len(ss))
		for _, s := range ss {
			x := s.T - off
			if x < xmin || x > xmax {
				continue
			}
			xy = append(xy, plotter.XY{X: x, Y: s.Watts})
		}
		if len(xy) == 0 {
			continue
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return nil, nil, err
		}
		l.Color = nodeColors[i%len(nodeColors)]
		if ss[0].Mean {
			l.StepStyle = plotter.PreStep
		}
		top.Add(l)
		top.Legend.Add(n, l)
	}
	top.X.Min, top.X.Max = xmin, xmax
	top.Y.Min = 0
	top.Legend.Top = true
	var bottom []*plot.Plot
	for _, n := range nodes {
		tl := res.Timelines[n]
		p := plot.New()
		p.Title.Text = fmt.Sprintf("%s: workers by state (%d)", n, tl.R)
		p.Y.Label.Text = "workers"
		p.X.Label.Text = "time (s, trace)"
		p.X.Min, p.X.Max = xmin, xmax
		p.Y.Min, p.Y.Max = 0, float64(tl.R)
		// Cumulative layers, drawn from the tallest down so each fill shows.
		var layers []signal.Class
		for _, c := range []signal.Class{signal.Other, signal.Comm, signal.Compute} {
			for _, s := range tl.Steps {
				if s.Count[c] > 0 {
					layers = append(layers, c)
					break
				}
			}
		}
		for li := range layers {
			xy := make(plotter.XYs, 0, len(tl.Steps)+1)
			for _, s := range tl.Steps {
				var y float64
				for _, c := range layers[li:] {
					y += float64(s.Count[c])
				}
				xy = append(xy, plotter.XY{X: s.T, Y: y})
			}
			xy = append(xy, plotter.XY{X: tl.End, Y: xy[len(xy)-1].Y})
			l, err := plotter.NewLine(xy)
			if err != nil {
				return nil, nil, err
			}
			l.StepStyle = plotter.PostStep
			l.FillColor = classColors[layers[li]]
			l.LineStyle.Width = 0
			p.Add(l)
			p.Legend.Add(energy.ClassName(layers[li]), l)
		}
		p.Legend.Top = true
		bottom = append(bottom, p)
	}
	return top, bottom, nil
}

// saveTiles writes the plots, one per row, as NAME.png and NAME.svg.
func saveTiles(name string, rows [][]*plot.Plot, w, h vg.Length) error {
	tiles := draw.Tiles{Rows: len(rows), Cols: 1, PadTop: vg.Points(6), PadBottom: vg.Points(6), PadY: vg.Points(10), PadX: vg.Points(6), PadLeft: vg.Points(6), PadRight: vg.Points(10)}
	png := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(96))
	svg := vgsvg.New(w, h)
	for _, c := range []vg.CanvasSizer{png, svg} {
		dc := draw.New(c)
		// Fill the background white (PNG is transparent otherwise).
		r := dc.Rectangle
		dc.FillPolygon(color.White, []vg.Point{r.Min, {X: r.Max.X, Y: r.Min.Y}, r.Max, {X: r.Min.X, Y: r.Max.Y}})
		cs := plot.Align(rows, tiles, dc)
		for i := range rows {
			rows[i][0].Draw(cs[i][0])
		}
	}
	// Each file is NAME.png.tmp (.svg.tmp) until complete (internal/output).
	if err := output.WriteFile(name+".png", func(w io.Writer) error {
		_, err := (vgimg.PngCanvas{Canvas: png}).WriteTo(w)
		return err
	}); err != nil {
		return err
	}
	return output.WriteFile(name+".svg", func(w io.Writer) error {
		_, err := svg.WriteTo(w)
		return err
	})
}
