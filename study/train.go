package study

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/parsers/paje"
	"github.com/tracecast/tracecast/stages/signal"
	"github.com/tracecast/tracecast/stats/surface"
)

// TrainConfig is the benchmarking phase: how the traces are analysed, and
// how the hit-rate surfaces are fitted and cut.
type TrainConfig struct {
	AnalyzeConfig
	Target float64 `flag:"target" help:"hit-rate at which the fitted surface is cut, in (0, 1]"`                                                                                                                            // (0, 1]
	Degree int     `flag:"degree" help:"total degree of the polynomial surface, 1 to 10; needs points at this many DAG sizes per cluster size at least (its degree in T is one less with exactly that many), else refused"` // 4: MATLAB's poly44
	Jobs   int     `flag:"jobs" help:"traces analysed in parallel"`
	Plots  bool    `flag:"plots" help:"write the plots (PNG and SVG)"`
}

// DefaultTrainConfig are train's defaults: the seed's cut at 95%, its
// degree-4 surface, every core.
func DefaultTrainConfig() TrainConfig {
	return TrainConfig{AnalyzeConfig: AnalyzeConfig{MaxSamples: 10_000_000, Alpha: 0.05}, Target: 0.95, Degree: 4, Jobs: runtime.GOMAXPROCS(0), Plots: true}
}

// NewModel is the model c trains, before the fit: it records how the
// hit-rates were computed so that a user of the model samples the same way.
func (c *TrainConfig) NewModel() *surface.Model {
	ws := c.Windows
	step := ws[0]
	if len(ws) > 1 {
		step = ws[1] - ws[0]
	}
	sampling := "fixed period"
	if c.Period.Sign() == 0 {
		sampling = fmt.Sprintf("automatic period per trace, min-period %s, max-samples %d", c.MinPeriod, c.MaxSamples)
	}
	return &surface.Model{Class: "idle", Method: string(c.Method), Alpha: c.Alpha, Period: c.Period.In("ms"), Sampling: sampling,
		Target: c.Target, WMin: ws[0], WMax: ws[len(ws)-1], WStep: step, Degree: c.Degree, Created: time.Now().UTC().Format(time.RFC3339)}
}

// Train is the train command: it analyses the inputs, fits the model and
// writes it with the per-trace outputs and plots into dir (see Fit). The
// analyses are in input order.
func Train(ins []Input, dir string, c *TrainConfig) ([]*Analysis, *surface.Model, error) {
	if len(c.Windows) == 0 {
		return nil, nil, usageErr(fmt.Errorf("no candidate window size"))
	}
	as, err := Analyses(ins, c.Jobs, &c.AnalyzeConfig, nil)
	if err != nil {
		return nil, nil, err
	}
	m := c.NewModel()
	if err := Fit(dir, as, m, c.Plots); err != nil {
		return nil, nil, err
	}
	return as, m, nil
}

// points are the analyses' (w, T, hit-rate) points per R and the number of
// traces per R.
func points(as []*Analysis) (map[int][]surface.Point, map[int]int, error) {
	byR := map[int][]surface.Point{}
	traces := map[int]int{}
	for _, a := range as {
		traces[a.R]++
		for _, s := range a.Sweep {
			if s.Compared == 0 {
				continue // nothing to say about this window size
			}
			byR[a.R] = append(byR[a.R], surface.Point{W: float64(s.Window), T: float64(a.T), HitRate: s.HitRate})
		}
	}
	if len(byR) == 0 {
		return nil, nil, fmt.Errorf("no hit-rate point: the traces are shorter than two windows of the smallest size")
	}
	return byR, traces, nil
}

// Fit fits m (from NewModel) on the analyses, one surface per R cut at
// every T trained, and writes dir/window-model.json, traces.jsonl,
// points.csv and, with plots, dir/plots.
func Fit(dir string, as []*Analysis, m *surface.Model, plots bool) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	byR, traces, err := points(as)
	if err != nil {
		return err
	}
	if err := surface.Build(m, byR, traces, nil); err != nil {
		return err
	}
	if err := writeJSON(filepath.Join(dir, "window-model.json"), m); err != nil {
		return err
	}
	if err := WriteOutputs(dir, as); err != nil {
		return err
	}
	if plots {
		return modelPlots(filepath.Join(dir, "plots"), m, byR)
	}
	return nil
}

// WindowFromModel is the window size (samples) the model file at path gives
// for R workers and a DAG of T tasks: linear in T between the trained DAG
// sizes and in log2 R between the trained cluster sizes, clamped at the ends.
func WindowFromModel(path string, R, T int) (int, error) {
	m, err := surface.Load(path)
	if err != nil {
		return 0, err
	}
	return m.Window(R, T)
}

// ModelWindow is the window size the model file gives for a trace of R
// workers and a DAG of T tasks (tracecast predict --model), and the T used:
// T <= 0 counts the tasks of the trace at path, which reads it once more.
func ModelWindow(model, path string, R, T int) (window, tasks int, err error) {
	if T <= 0 {
		if T, err = TasksInTrace(path); err != nil {
			return 0, 0, err
		}
	}
	w, err := WindowFromModel(model, R, T)
	return w, T, err
}

// TasksInTrace counts the tasks of a StarPU trace (the states of its
// workers that the StarPU rules call compute): the DAG size T for
// WindowFromModel when it is not given. It reads the whole trace.
func TasksInTrace(path string) (int, error) {
	rules := signal.StarPU()
	if err := rules.Compile(); err != nil {
		return 0, err
	}
	f, name, closeIn, err := openTrace(path)
	if err != nil {
		return 0, err
	}
	defer closeIn()
	o := paje.DefaultOptions()
	o.Name = name
	n := 0
	_, err = paje.Read(f, o, func(es []tracecast.Entity) error {
		for i := range es {
			if isTask(rules, &es[i]) {
				n++
			}
		}
		return nil
	})
	return n, err
}

// ClassifyIdle is Pallipuram et al.'s (2014) §IV-B state of a trace (uniform idle, patch,
// uniform computation) from its idle signal sampled at period.
func ClassifyIdle(sig *signal.Signal, period float64) surface.Classification {
	c := surface.Classifier{R: sig.R}
	sig.Sample(signal.Idle, period, func(_ int, _ float64, x int) { c.Add(x) })
	return c.Result()
}
