package report

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/tracecast/tracecast/models/eiger"
)

// Formula writes a cluster's model as "target = w0 + w1·term1 + ...".
func Formula(target string, cl *eiger.Cluster) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s = %.6g", target, cl.Weights[0])
	for k, term := range cl.Terms[1:] {
		w := cl.Weights[k+1]
		sign := "+"
		if w < 0 {
			sign, w = "−", -w
		}
		fmt.Fprintf(&b, " %s %.6g·%s", sign, w, term)
	}
	return b.String()
}

func pct(p *float64) string {
	if p == nil {
		return "—"
	}
	return fmt.Sprintf("%.2f%%", *p)
}

func r2s(p *float64) string {
	if p == nil {
		return "—"
	}
	return fmt.Sprintf("%.4f", *p)
}

// WriteTaskModelText writes a fit-model file for a person: per group, the
// inputs, each cluster's model and training fit, the cross-validated
// errors next to the two baselines, and what makes a model unusable
// (negative predictions, a failed fit).
func WriteTaskModelText(w io.Writer, f *eiger.File) error {
	by := "no grouping"
	if len(f.GroupBy) > 0 {
		by = "by " + strings.Join(f.GroupBy, ", ")
	}
	pool := strings.Join(f.Pool, " ")
	if f.MaxFactors > 0 {
		pool = fmt.Sprintf("products of up to %d factors %s", f.MaxFactors, pool)
		if len(f.PoolSingles) > 0 {
			pool += ", and " + strings.Join(f.PoolSingles, " ") + " alone"
		}
	}
	fmt.Fprintf(w, "Eiger models of %s from %s, %s: threshold %g, %d cluster(s), pool %s", f.Target, f.Source, by,
		f.Threshold, f.Clusters, pool)
	if f.Selection != "" {
		fmt.Fprintf(w, ", chosen on %s error", f.Selection)
	}
	if f.PCA {
		fmt.Fprint(w, ", on principal components")
	}
	fmt.Fprintln(w)
	for i := range f.Groups {
		g := &f.Groups[i]
		fmt.Fprintf(w, "\n%s  (n %d", g.Name, g.N)
		if g.NoTarget > 0 {
			fmt.Fprintf(w, ", %d rows without %s", g.NoTarget, f.Target)
		}
		fmt.Fprintln(w, ")")
		if g.Error != "" {
			fmt.Fprintf(w, "  no model: %s\n", g.Error)
			continue
		}
		md := g.Model
		if md.PCA {
			fmt.Fprintf(w, "  variables: %s (principal components of %s)\n", strings.Join(md.Variables, ", "), strings.Join(md.Inputs, ", "))
		} else {
			fmt.Fprintf(w, "  inputs: %s\n", orNone(md.Variables))
		}
		if len(md.Dropped) > 0 {
			var parts []string
			for _, d := range md.Dropped {
				parts = append(parts, d.Input)
			}
			fmt.Fprintf(w, "  dropped (zero variance or missing): %s\n", strings.Join(parts, ", "))
		}
		if md.Note != "" {
			fmt.Fprintf(w, "  note: %s\n", md.Note)
		}
		for c := range md.Clusters {
			cl := &md.Clusters[c]
			prefix := "  "
			if len(md.Clusters) > 1 {
				fmt.Fprintf(w, "  cluster %d (n %d):\n", c, cl.N)
				prefix = "    "
			}
			fmt.Fprintf(w, "%s%s\n", prefix, Formula(f.Target, cl))
			if cl.Note != "" {
				fmt.Fprintf(w, "%snote: %s\n", prefix, cl.Note)
			}
			fmt.Fprintf(w, "%strain: adj R² %s  R² %s  RMSE %.4g  MAPE %s\n", prefix, r2s(cl.AdjR2), r2s(cl.R2), cl.RMSE, pct(cl.MAPE))
			if cl.Negative > 0 {
				fmt.Fprintf(w, "%sUNUSABLE: predicts a negative %s for %d of its %d training rows\n", prefix, f.Target, cl.Negative, cl.N)
			}
		}
		if v := g.Validation; v != nil {
			if v.Folds == 0 {
				fmt.Fprintf(w, "  cross-validation: %s\n", v.StarPUNote)
				continue
			}
			held := ""
			if v.ByInputs {
				held = " (held-out parameter combinations)"
			}
			fmt.Fprintf(w, "  %d-fold cross-validation%s   %10s %10s\n", v.Folds, held, "MAPE", "R²")
			row := func(name string, s *eiger.Scores) {
				fmt.Fprintf(w, "    %-24s %10s %10s", name, pct(s.MAPE), r2s(s.R2))
				var notes []string
				if s.Negative > 0 {
					notes = append(notes, fmt.Sprintf("%d negative predictions", s.Negative))
				}
				if s.Failed > 0 {
					notes = append(notes, fmt.Sprintf("%d of %d rows not predictable: a term undefined there; scores over the others", s.Failed, s.N))
				}
				if s.R2 != nil && *s.R2 < 0 {
					notes = append(notes, "worse than the mean")
				}
				if len(notes) > 0 {
					fmt.Fprintf(w, "   (%s)", strings.Join(notes, "; "))
				}
				fmt.Fprintln(w)
			}
			row("eiger", &v.Eiger)
			if v.Declared != nil {
				row("declared (least squares)", v.Declared)
			}
			row("history (mean)", &v.History)
			if v.StarPU != nil {
				row("starpu a·size^b+c", v.StarPU)
			} else {
				fmt.Fprintf(w, "    %-24s %s\n", "starpu a·size^b+c", "n/a: "+v.StarPUNote)
			}
		}
		if d := g.Declared; d != nil {
			if d.Error != "" {
				fmt.Fprintf(w, "  declared %s: %s\n", strings.Join(d.Terms[1:], " "), d.Error)
			} else {
				fmt.Fprintf(w, "  declared, least squares on the group: %s\n", Formula(f.Target, &eiger.Cluster{Terms: d.Terms, Weights: d.Weights}))
			}
		}
		if g.StarPU != nil {
			fmt.Fprintf(w, "  starpu regression on the group: %s = %.4g·size^%.4f %+.4g (RMSE %.4g)\n", f.Target, g.StarPU.A, g.StarPU.B, g.StarPU.C, g.StarPU.RMSE)
		}
	}
	return nil
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none (every input constant: the model is the mean)"
	}
	return strings.Join(s, ", ")
}

// WriteTaskModelPlots draws, for each group with a model, GROUP.png and
// GROUP.svg in dir: measured against predicted (training fit and
// cross-validation's held-out predictions, with the diagonal) and the
// residuals against the prediction. It returns the files' base names.
func WriteTaskModelPlots(dir string, f *eiger.File) ([]string, error) {
	var names []string
	for i := range f.Groups {
		g := &f.Groups[i]
		if g.Model == nil || len(g.Fitted) == 0 {
			continue
		}
		top := plot.New()
		top.Title.Text = fmt.Sprintf("%s: %s measured vs predicted", g.Name, f.Target)
		top.X.Label.Text = "predicted " + f.Target
		top.Y.Label.Text = "measured " + f.Target
		bottom := plot.New()
		bottom.Title.Text = "residuals (measured − predicted)"
		bottom.X.Label.Text = "predicted " + f.Target
		bottom.Y.Label.Text = "residual"
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, s := range []struct {
			pts   [][2]float64
			label string
			col   color.Color
		}{
			{g.Fitted, "training fit", color.RGBA{R: 31, G: 119, B: 180, A: 255}},
			{g.HeldOut, "held out (CV)", color.RGBA{R: 255, G: 127, B: 14, A: 255}},
		} {
			if len(s.pts) == 0 {
				continue
			}
			xy := make(plotter.XYs, len(s.pts))
			res := make(plotter.XYs, len(s.pts))
			for k, p := range s.pts {
				xy[k] = plotter.XY{X: p[1], Y: p[0]}
				res[k] = plotter.XY{X: p[1], Y: p[0] - p[1]}
				lo, hi = math.Min(lo, math.Min(p[0], p[1])), math.Max(hi, math.Max(p[0], p[1]))
			}
			for _, pl := range []struct {
				p   *plot.Plot
				pts plotter.XYs
			}{{top, xy}, {bottom, res}} {
				sc, err := plotter.NewScatter(pl.pts)
				if err != nil {
					return nil, err
				}
				sc.GlyphStyle.Color = s.col
				sc.GlyphStyle.Radius = vg.Points(1.5)
				sc.GlyphStyle.Shape = draw.CircleGlyph{}
				pl.p.Add(sc)
				if pl.p == top {
					top.Legend.Add(s.label, sc)
				}
			}
		}
		diag, err := plotter.NewLine(plotter.XYs{{X: lo, Y: lo}, {X: hi, Y: hi}})
		if err != nil {
			return nil, err
		}
		diag.Color = color.Gray{Y: 120}
		diag.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		top.Add(diag)
		top.Legend.Top, top.Legend.Left = true, true
		zero := plotter.NewFunction(func(float64) float64 { return 0 })
		zero.Color = color.Gray{Y: 120}
		bottom.Add(zero)
		base := safeName(f.Target + "-" + g.Name)
		if err := saveTiles(filepath.Join(dir, base), [][]*plot.Plot{{top}, {bottom}}, 7*vg.Inch, 8*vg.Inch); err != nil {
			return nil, err
		}
		names = append(names, base)
	}
	return names, nil
}

// safeName makes a group name a file name.
func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '_'
	}, s)
}
