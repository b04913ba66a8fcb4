package study

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/tracecast/tracecast/forecast"
	"github.com/tracecast/tracecast/internal/input"
	"github.com/tracecast/tracecast/internal/output"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/parsers/paje"
	"github.com/tracecast/tracecast/stages/predict"
	"github.com/tracecast/tracecast/stages/signal"
	"github.com/tracecast/tracecast/stats/ks"
	"github.com/tracecast/tracecast/stats/surface"
)

// AnalyzeConfig says how a trace's idle signal is sampled and swept.
type AnalyzeConfig struct {
	// Period is Δ, a duration with a unit or a plain number of trace units;
	// 0: Pallipuram et al.'s (2014) rule with the floors below.
	Period     tracecast.TraceTime `flag:"period" help:"sampling period for every trace: a duration (1ms) or a number in the trace's unit (ms for StarPU); 0: per trace, half the shortest time between two changes, raised by --min-period and --max-samples"`
	MinPeriod  tracecast.TraceTime `flag:"min-period" help:"floor for the per-trace period (--period 0): a duration or a number in the trace's unit"`
	MaxSamples int                 `flag:"max-samples" help:"the per-trace period is raised so that a signal has at most this many samples (--period 0)"`
	Windows    []int               // candidate window sizes, samples, increasing
	Method     ks.Method
	Alpha      float64 `flag:"alpha" help:"KS significance level, in (0, 1)"`
}

// Analysis is one trace's surface-core output.
type Analysis struct {
	Trace    string                 `json:"trace"`
	R        int                    `json:"r"`
	T        int                    `json:"t"`
	Tasks    int                    `json:"tasks_seen"` // compute states in the trace
	Period   float64                `json:"period"`
	Samples  int                    `json:"samples"`
	Class    surface.Classification `json:"classification"`
	Sweep    []ks.SweepResult       `json:"-"`
	Labels   map[string]string      `json:"labels,omitempty"`
	Validate *Validation            `json:"validation,omitempty"`
}

// Validation is the prediction phase run on a trace with the model's window.
// A rate or score over nothing is nil (null in traces.jsonl), not 0: a
// trace shorter than two windows has no verdict, hence no hit-rate.
type Validation struct {
	Window   int      `json:"window"`
	Verdicts int      `json:"verdicts"`
	Hits     int      `json:"hits"`
	HitRate  *float64 `json:"hit_rate"` // nil when Verdicts is 0
	HorizonS float64  `json:"horizon_s"`
	// Forecast scores over the same horizon (docs/forecasts.md): the
	// default method's MSE of p and the baselines' at the same issue times
	// (every horizon/10), for idle>=25%; Coverage of its 90% intervals.
	// All nil when Forecasts is 0.
	Forecasts      int      `json:"forecasts"`
	MSEAuto        *float64 `json:"mse_auto"`
	MSEKSPaper     *float64 `json:"mse_ks_paper"`
	MSEPersistence *float64 `json:"mse_persistence"`
	MSEClimatology *float64 `json:"mse_climatology"`
	Coverage       *float64 `json:"coverage"`
}

// WindowFunc gives the window size (samples) for R workers and a DAG of T
// tasks: (*surface.Model).Window.
type WindowFunc func(R, T int) (int, error)

// isTask says whether e is a task: a state of a worker that the StarPU
// rules call compute. T is the number of these when the DAG size is not known.
func isTask(rules *signal.Rules, e *tracecast.Entity) bool {
	return e.Nature == tracecast.NatureState && e.Type == rules.StateType && e.End > e.Start && rules.Classify(e.Value) == signal.Compute
}

// AnalyzeTrace streams a StarPU trace into its idle signal, classifies it,
// and sweeps every window size in one pass. predictW, when not nil, gives
// the window for the prediction phase from (R, T), which is then run on the
// trace (Analysis.Validate). T is the DAG size when known (else the number
// of tasks seen).
func AnalyzeTrace(r io.Reader, name string, T int, cfg *AnalyzeConfig, predictW WindowFunc) (*Analysis, error) {
	rules := signal.StarPU()
	if err := rules.Compile(); err != nil {
		return nil, err
	}
	b := signal.NewBuilder(rules)
	tasks := 0
	unit := "ms"
	o := paje.DefaultOptions()
	o.Name = name
	o.OnTimeUnit = func(u string) { unit = u }
	if _, err := paje.Read(r, o, func(es []tracecast.Entity) error {
		b.Add(es)
		for i := range es {
			if isTask(rules, &es[i]) {
				tasks++
			}
		}
		return nil
	}); err != nil {
		return nil, err
	}
	sig, err := b.Build()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	period, _, err := sig.Period(signal.Idle, cfg.Period.In(unit), cfg.MinPeriod.In(unit), cfg.MaxSamples, unit)
	if err != nil {
		return nil, usageErr(err)
	}
	if T <= 0 {
		T = tasks
	}
	a := &Analysis{Trace: name, R: sig.R, T: T, Tasks: tasks, Period: period}
	// One pass, the signal never held: O(R × window sizes) memory.
	sw := ks.NewSweeper(sig.R, cfg.Windows, cfg.Method, cfg.Alpha)
	cl := surface.Classifier{R: sig.R}
	a.Samples = sig.Sample(signal.Idle, period, func(_ int, _ float64, x int) {
		sw.Add(x)
		cl.Add(x)
	})
	a.Class = cl.Result()
	a.Sweep = sw.Results()
	if predictW != nil {
		if a.Validate, err = validate(sig, name, unit, period, T, cfg, predictW); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// validate runs the prediction phase on sig with the window predictW gives
// for (R, T) and counts its verdicts: Pallipuram et al.'s (2014) validation hit-rate.
func validate(sig *signal.Signal, name, unit string, period float64, T int, cfg *AnalyzeConfig, predictW WindowFunc) (*Validation, error) {
	w, err := predictW(sig.R, T)
	if err != nil {
		return nil, err
	}
	ups := tracecast.PerSecond(unit)
	v := &Validation{Window: w, HorizonS: float64(w) * period / ups}
	err = predict.Run(sig, predict.TraceID(name), period, ups, predict.Options{
		Window: w, Queries: []string{"idle>=25%"}, Method: cfg.Method, Alpha: cfg.Alpha,
	}, predict.Sink{
		Window: func(tracecast.Window) {}, Prediction: func(tracecast.Prediction) {}, Alert: func(tracecast.Alert) {},
		Verdict: func(x tracecast.Verdict) {
			v.Verdicts++
			if x.Hit {
				v.Hits++
			}
		},
	})
	if err != nil {
		return nil, err
	}
	if v.Verdicts > 0 {
		h := float64(v.Hits) / float64(v.Verdicts)
		v.HitRate = &h
	}
	return v, scoreForecasts(sig, ups, v)
}

// scoreForecasts forecasts the idle>=25% share over the validation's horizon
// with the default method and scores it against the baselines, so the
// report's headline is forecast quality, not the KS hit-rate.
func scoreForecasts(sig *signal.Signal, ups float64, v *Validation) error {
	q, _ := forecast.ParseQuery("idle>=25%")
	var fs []tracecast.Forecast
	e, err := forecast.New(forecast.Config{Run: "validation", Class: "idle", Queries: []forecast.Query{q},
		Horizons: []float64{v.HorizonS}, Every: v.HorizonS / 10}, forecast.Sink{Forecast: func(f tracecast.Forecast) { fs = append(fs, f) }})
	if err != nil {
		return err
	}
	var steps forecast.Steps
	for _, st := range sig.Steps {
		t, x := st.T/ups, int(st.Count[signal.Idle])
		e.Change(t, x, sig.R)
		steps.Add(t, x, sig.R)
	}
	steps.End = sig.End / ups
	e.Finish(steps.End)
	scores, err := forecast.Verify(&steps, fs)
	if err != nil || len(scores) == 0 {
		return err
	}
	sc := scores[0]
	if sc.N == 0 {
		return nil
	}
	v.Forecasts = sc.N
	v.MSEAuto, v.MSEKSPaper, v.MSEPersistence, v.MSEClimatology, v.Coverage = &sc.MSEP, &sc.MSEKSPaper, &sc.MSEPersistence, &sc.MSEClimatology, &sc.Coverage
	return nil
}

// Input is one trace to analyse: a path and, from the metadata, T.
type Input struct {
	Path   string
	T      int // DAG size; 0: the number of tasks in the trace
	Labels map[string]string
}

// ReadMeta reads a synthesizer metadata file into a train input.
func ReadMeta(path string) (Input, error) {
	b, err := input.ReadFile(path)
	if err != nil {
		return Input{}, err
	}
	var m SynthMeta
	if err := json.Unmarshal(b, &m); err != nil {
		return Input{}, fmt.Errorf("%s: %w", path, err)
	}
	if m.Kind != "tracecast.synth" || m.Trace == "" {
		return Input{}, fmt.Errorf("%s: not a synth metadata file", path)
	}
	tr := m.Trace
	if !filepath.IsAbs(tr) {
		tr = filepath.Join(filepath.Dir(path), tr)
	}
	return Input{Path: tr, T: m.DAG.Tasks, Labels: m.Labels}, nil
}

// Inputs are the traces of metaDir's *.meta.json files (in name order, none
// when metaDir is empty) followed by those of paths: a path ending in .json
// is a metadata file, any other a trace (T is then the tasks it holds).
func Inputs(metaDir string, paths []string) ([]Input, error) {
	if metaDir != "" {
		ms, _ := filepath.Glob(filepath.Join(metaDir, "*.meta.json"))
		sort.Strings(ms)
		paths = append(ms, paths...)
	}
	var ins []Input
	for _, a := range paths {
		if strings.HasSuffix(a, ".json") || strings.HasSuffix(a, ".json.gz") {
			in, err := ReadMeta(a)
			if err != nil {
				return nil, err
			}
			ins = append(ins, in)
		} else {
			ins = append(ins, Input{Path: a})
		}
	}
	return ins, nil
}

// openTrace opens a trace file, or standard input for "-" (as the other
// tracecast commands do: the study must not depend on cmd/).
func openTrace(path string) (io.Reader, string, func(), error) {
	if path == "-" {
		return os.Stdin, "<stdin>", func() {}, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, "", nil, err
	}
	return f, path, func() { f.Close() }, nil
}

// Analyses analyses the inputs on jobs goroutines, in input order.
func Analyses(ins []Input, jobs int, cfg *AnalyzeConfig, predictW WindowFunc) ([]*Analysis, error) {
	return parallel(len(ins), jobs, func(i int) (*Analysis, error) {
		in := ins[i]
		f, name, closeIn, err := openTrace(in.Path)
		if err != nil {
			return nil, err
		}
		a, err := AnalyzeTrace(f, name, in.T, cfg, predictW)
		closeIn()
		if err != nil {
			return nil, err
		}
		a.Labels = in.Labels
		return a, nil
	})
}

// parallel runs fn(0..n-1) on jobs goroutines and returns the results in
// order, or the first error in index order once all are done: the outputs
// do not depend on the number of jobs or on the scheduling.
func parallel[T any](n, jobs int, fn func(i int) (T, error)) ([]T, error) {
	out := make([]T, n)
	errs := make([]error, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for range max(1, jobs) {
		wg.Go(func() {
			for i := range next {
				out[i], errs[i] = fn(i)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// WriteOutputs writes the per-trace lines (dir/traces.jsonl) and every
// hit-rate point (dir/points.csv).
func WriteOutputs(dir string, as []*Analysis) error {
	// Each file is complete or absent (internal/output).
	if err := output.WriteFile(filepath.Join(dir, "traces.jsonl"), func(w io.Writer) error {
		bw := bufio.NewWriter(w)
		enc := json.NewEncoder(bw)
		var encErr error
		for _, a := range as {
			encErr = firstErr(encErr, enc.Encode(a))
		}
		return firstErr(encErr, bw.Flush())
	}); err != nil {
		return err
	}
	return output.WriteFile(filepath.Join(dir, "points.csv"), func(w io.Writer) error { return writePoints(w, as) })
}

func writePoints(w io.Writer, as []*Analysis) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "trace,r,t,state,window,samples,compared,hits,hit_rate")
	for _, a := range as {
		for _, s := range a.Sweep {
			// Over no comparison there is no rate: an empty field (CSV's null).
			rate := ""
			if r := s.Rate(); r != nil {
				rate = strconv.FormatFloat(*r, 'f', 6, 64)
			}
			fmt.Fprintf(bw, "%s,%d,%d,%s,%d,%d,%d,%d,%s\n", a.Trace, a.R, a.T, a.Class.State, s.Window, s.Samples, s.Compared, s.Hits, rate)
		}
	}
	return bw.Flush()
}
