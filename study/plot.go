package study

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/tracecast/tracecast/stats/surface"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// surfaceGrid evaluates a fitted surface on a (w, T) grid for the heat map.
type surfaceGrid struct {
	fit    *surface.Fit
	ws, ts []float64
}

func (g surfaceGrid) Dims() (c, r int) { return len(g.ws), len(g.ts) }
func (g surfaceGrid) X(c int) float64  { return g.ws[c] }
func (g surfaceGrid) Y(r int) float64  { return g.ts[r] }
func (g surfaceGrid) Z(c, r int) float64 {
	return math.Max(0, math.Min(1, g.fit.Eval(g.ws[c], g.ts[r])))
}

// onePalette is a single colour: plotter.NewContour takes a palette for its
// lines, and the target contour is drawn in one colour.
type onePalette struct{ c color.Color }

var _ palette.Palette = onePalette{}

func (p onePalette) Colors() []color.Color { return []color.Color{p.c} }

// savePlot writes p as dir/name.png (for REPORT.md) and .svg (scalable).
func savePlot(p *plot.Plot, dir, name string, w, h vg.Length) error {
	for _, ext := range []string{".png", ".svg"} {
		if err := p.Save(w, h, filepath.Join(dir, name+ext)); err != nil {
			return err
		}
	}
	return nil
}

// modelPlots draws, per R, the fitted hit-rate surface as a heat map
// with the target contour, the measured points and the cuts (Pallipuram et al.'s (2014)
// Fig. 5/7); and the window size against the DAG size per R (Fig. 9).
func modelPlots(dir string, m *surface.Model, byR map[int][]surface.Point) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, rm := range m.Surfaces {
		pts := byR[rm.R]
		tmin, tmax := math.Inf(1), math.Inf(-1)
		for _, p := range pts {
			tmin, tmax = math.Min(tmin, p.T), math.Max(tmax, p.T)
		}
		if tmax <= tmin {
			tmax = tmin + 1
		}
		g := surfaceGrid{fit: rm.Fit}
		for i := 0; i <= 60; i++ {
			g.ws = append(g.ws, float64(m.WMin)+float64(m.WMax-m.WMin)*float64(i)/60)
		}
		for i := 0; i <= 40; i++ {
			g.ts = append(g.ts, tmin+(tmax-tmin)*float64(i)/40)
		}
		p := plot.New()
		p.Title.Text = fmt.Sprintf("Fitted hit-rate surface, R = %d (R² = %.3f, %d traces)", rm.R, rm.Fit.R2, rm.Traces)
		p.X.Label.Text = "window size (samples)"
		p.Y.Label.Text = "DAG size (tasks)"
		pal := moreland.SmoothBlueRed()
		pal.SetMin(0)
		pal.SetMax(1)
		hm := plotter.NewHeatMap(g, pal.Palette(64))
		hm.Min, hm.Max = 0, 1
		p.Add(hm)
		ct := plotter.NewContour(g, []float64{m.Target}, onePalette{color.Black})
		ct.LineStyles = []draw.LineStyle{{Color: color.Black, Width: vg.Points(2)}}
		p.Add(ct)
		var cutXY plotter.XYs
		for _, c := range rm.Cuts {
			cutXY = append(cutXY, plotter.XY{X: float64(c.W), Y: float64(c.T)})
		}
		if len(cutXY) > 0 {
			sc, err := plotter.NewScatter(cutXY)
			if err != nil {
				return err
			}
			sc.GlyphStyle.Color = color.White
			sc.GlyphStyle.Shape = draw.CircleGlyph{}
			sc.GlyphStyle.Radius = vg.Points(3)
			p.Add(sc)
			p.Legend.Add(fmt.Sprintf("%.0f%% contour and cuts", 100*m.Target), sc)
		}
		// A colour key: swatches of the palette at a few hit-rates.
		for _, v := range []float64{1, 0.95, 0.9, 0.8, 0.6, 0.4} {
			if c, err := pal.At(v); err == nil {
				p.Legend.Add(fmt.Sprintf("hit-rate %.2f", v), swatch{c})
			}
		}
		p.Legend.Top = true
		p.X.Min, p.X.Max = float64(m.WMin), float64(m.WMax)
		p.Y.Min, p.Y.Max = tmin, tmax
		if err := savePlot(p, dir, fmt.Sprintf("surface_R%03d", rm.R), 7*vg.Inch, 5*vg.Inch); err != nil {
			return err
		}
	}
	// Fig. 9: window size vs DAG size per R.
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Window-size model (cut at %.0f%%)", 100*m.Target)
	p.X.Label.Text = "DAG size (tasks)"
	p.Y.Label.Text = "window size (samples)"
	p.Add(plotter.NewGrid())
	rs := make([]int, 0, len(m.Surfaces))
	for _, rm := range m.Surfaces {
		rs = append(rs, rm.R)
	}
	sort.Ints(rs)
	cols := moreland.SmoothBlueRed()
	cols.SetMin(0)
	cols.SetMax(float64(max(1, len(rs)-1)))
	for i, rm := range m.Surfaces {
		var xy plotter.XYs
		for _, c := range rm.Cuts {
			xy = append(xy, plotter.XY{X: float64(c.T), Y: float64(c.W)})
		}
		if len(xy) == 0 {
			continue
		}
		l, s, err := plotter.NewLinePoints(xy)
		if err != nil {
			return err
		}
		col, _ := cols.At(float64(i))
		l.Color, s.Color = col, col
		l.Width = vg.Points(1.5)
		s.Shape = draw.CircleGlyph{}
		p.Add(l, s)
		p.Legend.Add(fmt.Sprintf("R = %d", rm.R), l, s)
	}
	p.Legend.Top = true
	p.Y.Min, p.Y.Max = 0, 1.3*float64(m.WMax)
	p.Y.Tick.Marker = plot.TickerFunc(func(min, max float64) []plot.Tick {
		var ts []plot.Tick
		for v := 0.0; v <= float64(m.WMax); v += 10000 {
			ts = append(ts, plot.Tick{Value: v, Label: fmt.Sprintf("%.0f", v)})
		}
		return ts
	})
	return savePlot(p, dir, "window_model", 7*vg.Inch, 5*vg.Inch)
}

// swatch is a legend thumbnail filled with one colour.
type swatch struct{ c color.Color }

func (s swatch) Thumbnail(c *draw.Canvas) {
	pts := []vg.Point{{X: c.Min.X, Y: c.Min.Y}, {X: c.Min.X, Y: c.Max.Y}, {X: c.Max.X, Y: c.Max.Y}, {X: c.Max.X, Y: c.Min.Y}}
	c.FillPolygon(s.c, pts)
}

// plotValidation draws, per validation subset, the hit-rate of every trace
// against its DAG size, one line per cluster size (Fig. 10).
func plotValidation(dir string, vs []*Analysis, rs []int, sets int) error {
	cols := moreland.SmoothBlueRed()
	cols.SetMin(0)
	cols.SetMax(float64(max(1, len(rs)-1)))
	for s := 0; s < sets; s++ {
		p := plot.New()
		p.Title.Text = fmt.Sprintf("Validation subset %c: prediction hit-rate with the model's window", 'a'+s)
		p.X.Label.Text = "DAG size (tasks)"
		p.Y.Label.Text = "hit-rate"
		p.Y.Min, p.Y.Max = 0, 1.02
		p.Add(plotter.NewGrid())
		for i, r := range rs {
			var xy plotter.XYs
			for _, v := range vs {
				if v.R == r && v.Labels["subset"] == strconv.Itoa(s) && v.Validate != nil && v.Validate.HitRate != nil {
					xy = append(xy, plotter.XY{X: float64(v.T), Y: *v.Validate.HitRate})
				}
			}
			if len(xy) == 0 {
				continue
			}
			sort.Slice(xy, func(a, b int) bool { return xy[a].X < xy[b].X })
			l, pts, err := plotter.NewLinePoints(xy)
			if err != nil {
				return err
			}
			c, _ := cols.At(float64(i))
			l.Color, pts.Color = c, c
			pts.Shape = draw.CircleGlyph{}
			p.Add(l, pts)
			p.Legend.Add(fmt.Sprintf("R = %d", r), l, pts)
		}
		ref := plotter.NewFunction(func(float64) float64 { return 0.9 })
		ref.Color = color.Gray{128}
		ref.Dashes = []vg.Length{vg.Points(4), vg.Points(4)}
		p.Add(ref)
		p.Legend.Top = false
		if err := savePlot(p, dir, fmt.Sprintf("validation_%c", 'a'+s), 7*vg.Inch, 4.5*vg.Inch); err != nil {
			return err
		}
	}
	return nil
}
