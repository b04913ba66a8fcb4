package closedloop

import (
	"bufio"
	"encoding/json"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/klauspost/compress/gzip"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	bf "github.com/tracecast/tracecast/backfill"
	"github.com/tracecast/tracecast/internal/svgpanels"
)

// lengths are the task lengths of rows, in order.
func lengths(rows []Row) []float64 {
	var ds []float64
	for _, r := range rows {
		if !slices.Contains(ds, r.D) {
			ds = append(ds, r.D)
		}
	}
	return ds
}

// WriteTable writes the means as a table per task length, then whether the
// forecast policy dominates the timeouts (Verdict).
func WriteTable(w io.Writer, res *Result) error {
	bw := bufio.NewWriter(w)
	if len(res.Means) > 0 {
		m := res.Means[0]
		runs := "one DAG"
		if res.Seeds > 1 {
			runs = fmt.Sprintf("means over %d DAGs (seeds %d–%d)", res.Seeds, m.Seed, m.Seed+uint64(res.Seeds)-1)
		}
		fmt.Fprintf(bw, "closed loop: %d tasks on %d workers, wait mode; %s; without back-end tasks: makespan %.4g s, %.4g idle worker-seconds\n",
			m.Tasks, m.Workers, runs, m.BaseMakespan, m.BaseIdle)
	}
	for _, d := range lengths(res.Means) {
		fmt.Fprintf(bw, "back-end tasks of %s:\n", label(d))
		fmt.Fprintf(bw, "%16s %8s %9s %9s %9s %9s %9s %10s %7s %9s\n", "policy", "τ", "launches", "U (s)", "T (s)", "ΔT/T", "U/T", "p99 delay", "waited", "D₁ (s)")
		for _, r := range res.Means {
			if r.D != d {
				continue
			}
			tau := "-"
			if r.Timeout != nil {
				tau = label(*r.Timeout)
			}
			fmt.Fprintf(bw, "%16s %8s %9d %9.4g %9.4g %+8.3f%% %9.4g %8.3gms %7d %9.4g\n", r.Policy, tau, r.Launches, r.Harvest, r.Makespan,
				100*r.Slowdown, r.Throughput, r.DelayP99*1e3, r.Waited, r.FirstOrderDelay)
		}
		fmt.Fprintln(bw, Verdict(res.Means, d))
	}
	fmt.Fprintln(bw, "U: back-end work done; T: the primary's makespan; ΔT/T against the run without back-end tasks; U/T: back-end throughput (workers' worth);")
	fmt.Fprintln(bw, "p99 delay: of the primary tasks' starts; waited: primary tasks that waited for a back-end task; D₁: the delay at first order (tracecast backfill's)")
	return bw.Flush()
}

// Verdict says whether the forecast policy harvests more than every
// timeout policy of equal or lower slowdown, for task length d (Frontier).
func Verdict(rows []Row, d float64) string {
	ok, breakers := Frontier(rows, d)
	if ok {
		return fmt.Sprintf("  %s: forecast harvests more than every timeout of equal or lower slowdown: yes", label(d))
	}
	var f *Row
	for i := range rows {
		if rows[i].D == d && rows[i].Policy == bf.Forecast {
			f = &rows[i]
		}
	}
	if f == nil || len(breakers) == 0 {
		return fmt.Sprintf("  %s: forecast against the timeouts: not measured (run both policies)", label(d))
	}
	s := fmt.Sprintf("  %s: forecast harvests more than every timeout of equal or lower slowdown: no (forecast %.4g s at %+.3f%%;", label(d), f.Harvest, 100*f.Slowdown)
	for _, b := range breakers {
		s += fmt.Sprintf(" τ=%s %.4g s at %+.3f%%", label(*b.Timeout), b.Harvest, 100*b.Slowdown)
	}
	return s + ")"
}

// WriteJSON writes every run's row and the means as JSON lines
// (tracecast closed-loop's closedloop.jsonl), "record" saying which: a
// mean is the single run's row again when there is one seed.
func WriteJSON(w io.Writer, res *Result) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	type line struct {
		Record string `json:"record"`
		Row
	}
	for _, r := range res.Rows {
		if err := enc.Encode(line{"run", r}); err != nil {
			return err
		}
	}
	for _, r := range res.Means {
		if err := enc.Encode(line{"mean", r}); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// plotColors: greedy, online-timeout, residual, forecast, never (the
// timeout curve is black).
var plotColors = map[string]color.Color{
	bf.Greedy:        color.RGBA{R: 214, G: 39, B: 40, A: 255},
	bf.OnlineTimeout: color.RGBA{R: 148, G: 103, B: 189, A: 255},
	bf.Residual:      color.RGBA{R: 140, G: 86, B: 75, A: 255},
	bf.Forecast:      color.RGBA{R: 31, G: 119, B: 180, A: 255},
	bf.Never:         color.RGBA{R: 127, G: 127, B: 127, A: 255},
}

// WritePlot draws the frontier as SVG, a panel per task length: the
// primary's slowdown ΔT/T (%) against the back-end throughput U/T, the
// timeouts as a curve (τ growing towards the origin), every other policy
// as a point; from the means.
func WritePlot(w io.Writer, res *Result) error {
	ds := lengths(res.Means)
	if len(ds) == 0 {
		return fmt.Errorf("no closed-loop result to plot")
	}
	return svgpanels.Write(w, len(ds), func(i int) (*plot.Plot, error) {
		d := ds[i]
		p := plot.New()
		m := res.Means[0]
		p.Title.Text = fmt.Sprintf("closed loop, %d tasks on %d workers, back-end tasks of %s (%d DAGs)", m.Tasks, m.Workers, label(d), res.Seeds)
		p.X.Label.Text = "primary's makespan slowdown ΔT/T (%)"
		p.Y.Label.Text = "back-end throughput U/T (workers)"
		p.Add(plotter.NewGrid())
		var curve plotter.XYs
		for _, r := range res.Means {
			if r.D == d && r.Policy == bf.Timeout {
				curve = append(curve, plotter.XY{X: 100 * r.Slowdown, Y: r.Throughput})
			}
		}
		if len(curve) > 0 {
			l, pts, err := plotter.NewLinePoints(curve)
			if err != nil {
				return nil, err
			}
			pts.Shape = draw.CircleGlyph{}
			p.Add(l, pts)
			p.Legend.Add("timeout (each τ)", l, pts)
		}
		for _, pol := range Causal {
			if pol == bf.Timeout {
				continue
			}
			var xy plotter.XYs
			for _, r := range res.Means {
				if r.D == d && r.Policy == pol {
					xy = append(xy, plotter.XY{X: 100 * r.Slowdown, Y: r.Throughput})
				}
			}
			if len(xy) == 0 {
				continue
			}
			s, err := plotter.NewScatter(xy)
			if err != nil {
				return nil, err
			}
			s.Color, s.Shape, s.Radius = plotColors[pol], draw.BoxGlyph{}, vg.Points(4)
			if pol == bf.Forecast {
				s.Shape, s.Radius = draw.TriangleGlyph{}, vg.Points(6)
			}
			p.Add(s)
			p.Legend.Add(pol, s)
		}
		// Top left: high throughput at no slowdown, the corner no policy
		// reaches.
		p.Legend.Top, p.Legend.Left = true, true
		p.X.Min = math.Min(p.X.Min, 0)
		return p, nil
	})
}

// WriteFiles writes DIR/closedloop.jsonl (WriteJSON) and DIR/frontier.svg
// (WritePlot), creating DIR.
func WriteFiles(dir string, res *Result) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	write := func(name string, f func(io.Writer, *Result) error) error {
		path := filepath.Join(dir, name)
		out, err := os.Create(path)
		if err != nil {
			return err
		}
		if err = f(out, res); err == nil {
			err = out.Close()
		} else {
			out.Close()
		}
		if err != nil {
			os.Remove(path) // no partial file passes for one
			return fmt.Errorf("%s: %w", path, err)
		}
		return nil
	}
	if err := write("closedloop.jsonl", WriteJSON); err != nil {
		return err
	}
	return write("frontier.svg", WritePlot)
}

// TraceFiles keeps every run's trace as DIR/NAME.trace.gz (gzip, the
// fastest level).
func TraceFiles(dir string) Traces {
	return func(name string) (io.WriteCloser, error) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		f, err := os.Create(filepath.Join(dir, name+".trace.gz"))
		if err != nil {
			return nil, err
		}
		zw, _ := gzip.NewWriterLevel(f, gzip.BestSpeed)
		return gzFile{zw, f}, nil
	}
}

type gzFile struct {
	*gzip.Writer
	f *os.File
}

func (g gzFile) Close() error {
	err := g.Writer.Close()
	if cerr := g.f.Close(); err == nil {
		err = cerr
	}
	return err
}
