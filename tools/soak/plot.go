//go:build linux

package main

import (
	"image/color"
	"io"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/tracecast/tracecast/internal/output"
)

// span is a fault's interval, in seconds since the soak's start.
type span struct {
	from, to float64
	what     string
}

// writePlot draws the samples as one panel per quantity, stacked over
// the soak's time in minutes, with the faults shaded: NAME.svg, drawn
// with gonum/plot as the report's and the study's plots are.
func writePlot(path string, samples []sample, faults []span) error {
	panels := []struct {
		title string
		v     func(s sample) float64
	}{
		{"resident set (MiB)", func(s sample) float64 { return s.rssMiB }},
		{"goroutines", func(s sample) float64 { return s.goroutines }},
		{"open file descriptors", func(s sample) float64 { return s.fds }},
		{"consumer lag (messages)", func(s sample) float64 { return s.lag }},
		{"records out (per second)", nil},
	}
	rows := make([][]*plot.Plot, len(panels))
	for i, pn := range panels {
		p := plot.New()
		p.Y.Label.Text = pn.title
		if i == len(panels)-1 {
			p.X.Label.Text = "minutes (shaded: a fault — the broker down or its disk full)"
		}
		pts := make(plotter.XYs, 0, len(samples))
		for j, s := range samples {
			y := 0.0
			if pn.v != nil {
				y = pn.v(s)
			} else if j > 0 {
				// The records out's rate over the interval before.
				dt := (s.at - samples[j-1].at).Seconds()
				if dt > 0 {
					y = (s.recordsOut - samples[j-1].recordsOut) / dt
				}
			}
			pts = append(pts, plotter.XY{X: s.at.Minutes(), Y: y})
		}
		ymax := 1.0
		for _, pt := range pts {
			ymax = max(ymax, pt.Y)
		}
		for _, f := range faults {
			poly, err := plotter.NewPolygon(plotter.XYs{{X: f.from / 60, Y: 0}, {X: f.to / 60, Y: 0}, {X: f.to / 60, Y: ymax}, {X: f.from / 60, Y: ymax}})
			if err != nil {
				return err
			}
			poly.Color = color.RGBA{R: 255, G: 200, B: 120, A: 255}
			poly.LineStyle.Width = 0
			p.Add(poly)
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return err
		}
		l.Color = color.RGBA{R: 31, G: 119, B: 180, A: 255}
		p.Add(l)
		p.Y.Min = 0
		rows[i] = []*plot.Plot{p}
	}
	w, h := 20*vg.Centimeter, vg.Length(len(panels))*5*vg.Centimeter
	c := vgsvg.New(w, h)
	dc := draw.New(c)
	tiles := draw.Tiles{Rows: len(rows), Cols: 1, PadTop: vg.Points(6), PadBottom: vg.Points(6), PadY: vg.Points(10), PadX: vg.Points(6),
		PadLeft: vg.Points(6), PadRight: vg.Points(10)}
	cs := plot.Align(rows, tiles, dc)
	for i := range rows {
		rows[i][0].Draw(cs[i][0])
	}
	return output.WriteFile(path, func(w io.Writer) error {
		_, err := c.WriteTo(w)
		return err
	})
}
