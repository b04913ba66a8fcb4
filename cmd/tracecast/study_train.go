package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/parsers/paje"
	"github.com/tracecast/tracecast/stages/predict"
	"github.com/tracecast/tracecast/stages/signal"
	"github.com/tracecast/tracecast/stats/ks"
	"github.com/tracecast/tracecast/stats/surface"
)

// studyAnalyzeConfig says how a trace's idle signal is sampled and swept.
type studyAnalyzeConfig struct {
	period     float64 // Δ, trace units; 0: seed 004's rule with the floors below
	minPeriod  float64
	maxSamples int
	windows    []int
	method     ks.Method
	alpha      float64
}

// studyAnalysis is one trace's surface-core output.
type studyAnalysis struct {
	Trace    string                 `json:"trace"`
	R        int                    `json:"r"`
	T        int                    `json:"t"`
	Tasks    int                    `json:"tasks_seen"` // compute states in the trace
	Period   float64                `json:"period"`
	Samples  int                    `json:"samples"`
	Class    surface.Classification `json:"classification"`
	Sweep    []ks.SweepResult       `json:"-"`
	Labels   map[string]string      `json:"labels,omitempty"`
	Validate *studyValidation       `json:"validation,omitempty"`
}

// studyValidation is the prediction phase run on a trace with the model's window.
type studyValidation struct {
	Window   int     `json:"window"`
	Verdicts int     `json:"verdicts"`
	Hits     int     `json:"hits"`
	HitRate  float64 `json:"hit_rate"`
	HorizonS float64 `json:"horizon_s"`
}

// studyAnalyzeTrace streams a StarPU trace into its idle signal, classifies it,
// and sweeps every window size in one pass. predictW, when not nil, gives the
// window for the prediction phase from (R, T), and T is the DAG size when
// known (else the number of tasks seen).
func studyAnalyzeTrace(r io.Reader, name string, T int, cfg *studyAnalyzeConfig, predictW func(R, T int) (int, error)) (*studyAnalysis, error) {
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
			e := &es[i]
			if e.Nature == tracecast.NatureState && e.Type == rules.StateType && e.End > e.Start && rules.Classify(e.Value) == signal.Compute {
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
	period, _, err := sig.Period(signal.Idle, cfg.period, cfg.minPeriod, cfg.maxSamples)
	if err != nil {
		return nil, usageErr(err)
	}
	if T <= 0 {
		T = tasks
	}
	a := &studyAnalysis{Trace: name, R: sig.R, T: T, Tasks: tasks, Period: period}
	// One pass, the signal never held: O(R × window sizes) memory.
	sw := ks.NewSweeper(sig.R, cfg.windows, cfg.method, cfg.alpha)
	cl := surface.Classifier{R: sig.R}
	a.Samples = sig.Sample(signal.Idle, period, func(_ int, _ float64, x int) {
		sw.Add(x)
		cl.Add(x)
	})
	a.Class = cl.Result()
	a.Sweep = sw.Results()
	if predictW != nil {
		w, err := predictW(sig.R, T)
		if err != nil {
			return nil, err
		}
		v := &studyValidation{Window: w, HorizonS: float64(w) * period / unitsPerSecond(unit)}
		err = predict.Run(sig, predict.TraceID(name), period, unitsPerSecond(unit), predict.Options{
			Window: w, Queries: []string{"idle>=25%"}, Method: cfg.method, Alpha: cfg.alpha,
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
			v.HitRate = float64(v.Hits) / float64(v.Verdicts)
		}
		a.Validate = v
	}
	return a, nil
}

// studyInput is one trace to analyse: a path and, from the metadata, T.
type studyInput struct {
	path   string
	T      int
	labels map[string]string
}

// studyReadMeta reads a synthesizer metadata file into a train input.
func studyReadMeta(path string) (studyInput, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return studyInput{}, err
	}
	var m studySynthMeta
	if err := json.Unmarshal(b, &m); err != nil {
		return studyInput{}, fmt.Errorf("%s: %w", path, err)
	}
	if m.Kind != "tracecast.synth" || m.Trace == "" {
		return studyInput{}, fmt.Errorf("%s: not a synth metadata file", path)
	}
	tr := m.Trace
	if !filepath.IsAbs(tr) {
		tr = filepath.Join(filepath.Dir(path), tr)
	}
	return studyInput{path: tr, T: m.DAG.Tasks, labels: m.Labels}, nil
}

// studyBuildModel turns analyses into the per-R points and the model.
func studyBuildModel(as []*studyAnalysis, m *surface.Model) (map[int][]surface.Point, error) {
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
		return nil, fmt.Errorf("no hit-rate point: the traces are shorter than two windows of the smallest size")
	}
	return byR, surface.Build(m, byR, traces, nil)
}

// studyAnalyses analyses the inputs on jobs goroutines, in input order.
func studyAnalyses(ins []studyInput, jobs int, cfg *studyAnalyzeConfig, predictW func(R, T int) (int, error)) ([]*studyAnalysis, error) {
	return parallel(len(ins), jobs, func(i int) (*studyAnalysis, error) {
		in := ins[i]
		f, name, closeIn, err := openInput(in.path)
		if err != nil {
			return nil, err
		}
		a, err := studyAnalyzeTrace(f, name, in.T, cfg, predictW)
		closeIn()
		if err != nil {
			return nil, err
		}
		a.Labels = in.labels
		return a, nil
	})
}

// parallel runs fn(0..n-1) on jobs goroutines and returns the results in
// order, or the first error in index order once all are done.
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

// writeStudyOutputs writes the per-trace lines and hit-rate points.
func writeStudyOutputs(dir string, as []*studyAnalysis) error {
	f, err := os.Create(filepath.Join(dir, "traces.jsonl"))
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	enc := json.NewEncoder(bw)
	for _, a := range as {
		enc.Encode(a)
	}
	if err := firstErr(bw.Flush(), f.Close()); err != nil {
		return err
	}
	f, err = os.Create(filepath.Join(dir, "points.csv"))
	if err != nil {
		return err
	}
	bw = bufio.NewWriter(f)
	fmt.Fprintln(bw, "trace,r,t,state,window,samples,compared,hits,hit_rate")
	for _, a := range as {
		for _, s := range a.Sweep {
			fmt.Fprintf(bw, "%s,%d,%d,%s,%d,%d,%d,%d,%.6f\n", a.Trace, a.R, a.T, a.Class.State, s.Window, s.Samples, s.Compared, s.Hits, s.HitRate)
		}
	}
	return firstErr(bw.Flush(), f.Close())
}

type studyTrainFlags struct {
	metaDir    string
	windows    string
	target     float64
	method     string
	alpha      float64
	period     float64
	minPeriod  float64
	maxSamples int
	degree     int
	jobs       int
	out        string
	plots      bool
}

func (t *studyTrainFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&t.windows, "windows", "1000:50000:1000", "candidate window sizes in samples: a list or FROM:TO:STEP")
	fl.Float64Var(&t.target, "target", 0.95, "hit-rate at which the fitted surface is cut")
	fl.StringVar(&t.method, "method", "matlab", "KS p-value method: matlab, scipy, r")
	fl.Float64Var(&t.alpha, "alpha", 0.05, "KS significance level")
	fl.Float64Var(&t.period, "period", 0, "sampling period Δ in trace units (ms for StarPU) for every trace; 0: seed 004's per-trace rule (half the shortest time between two changes) raised by --min-period and --max-samples")
	fl.Float64Var(&t.minPeriod, "min-period", 0, "floor for the per-trace period (--period 0)")
	fl.IntVar(&t.maxSamples, "max-samples", 10_000_000, "the per-trace period is raised so that a signal has at most this many samples (--period 0)")
	fl.IntVar(&t.degree, "degree", 4, "total degree of the polynomial surface")
	fl.IntVar(&t.jobs, "jobs", runtime.GOMAXPROCS(0), "traces analysed in parallel")
	fl.BoolVar(&t.plots, "plots", true, "write the plots (PNG and SVG)")
}

func (t *studyTrainFlags) config() (*studyAnalyzeConfig, error) {
	m, err := ks.ParseMethod(t.method)
	if err != nil {
		return nil, usageErr(err)
	}
	ws, err := parseWindows(t.windows)
	if err != nil {
		return nil, usageErr(err)
	}
	if t.target <= 0 || t.target > 1 {
		return nil, usageErr(fmt.Errorf("--target %g: want (0, 1]", t.target))
	}
	return &studyAnalyzeConfig{period: t.period, minPeriod: t.minPeriod, maxSamples: t.maxSamples, windows: ws, method: m, alpha: t.alpha}, nil
}

func (t *studyTrainFlags) model(cfg *studyAnalyzeConfig) *surface.Model {
	ws := cfg.windows
	step := ws[0]
	if len(ws) > 1 {
		step = ws[1] - ws[0]
	}
	sampling := "fixed period"
	if cfg.period == 0 {
		sampling = fmt.Sprintf("seed 004 rule per trace, min-period %g, max-samples %d", cfg.minPeriod, cfg.maxSamples)
	}
	return &surface.Model{Class: "idle", Method: string(cfg.method), Alpha: cfg.alpha, Period: cfg.period, Sampling: sampling,
		Target: t.target, WMin: ws[0], WMax: ws[len(ws)-1], WStep: step, Degree: t.degree, Created: time.Now().UTC().Format(time.RFC3339)}
}

func newTrainCmd() *cobra.Command {
	var t studyTrainFlags
	cmd := &cobra.Command{
		Use:   "train (--meta-dir DIR | META.json... | TRACE...) -o DIR",
		Short: "Seed 004's benchmarking phase: hit-rate surfaces per cluster size, fitted and cut into a window-size model",
		Long: `train is the surface builder and analyzer of seed 004. For every trace (from
the synthesizer's metadata files: --meta-dir DIR, or META.json arguments; or
trace files, whose R is the number of workers and T the number of tasks seen)
it samples the idle-worker signal, classifies the trace (uniform idle / patch
/ uniform computation, §IV-B), and computes the KS hit-rate of every candidate
window size in one pass. Per cluster size R, the (w, T, hit-rate) points are
fitted by a least-squares polynomial surface of total degree --degree (4:
MATLAB's poly44), cut at --target for each T: the window-size model.

Writes DIR/window-model.json (versioned: coefficients, R², residuals, cuts),
DIR/traces.jsonl (per trace: R, T, period, samples, classification),
DIR/points.csv (every hit-rate) and DIR/plots/ (surface heat maps with the
target contour per R, window size vs DAG size), and prints one line per trace.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if t.out == "" {
				return usageErr(fmt.Errorf("-o DIR is required"))
			}
			cfg, err := t.config()
			if err != nil {
				return err
			}
			var ins []studyInput
			if t.metaDir != "" {
				ms, _ := filepath.Glob(filepath.Join(t.metaDir, "*.meta.json"))
				sort.Strings(ms)
				args = append(ms, args...)
			}
			for _, a := range args {
				if strings.HasSuffix(a, ".json") {
					in, err := studyReadMeta(a)
					if err != nil {
						return err
					}
					ins = append(ins, in)
				} else {
					ins = append(ins, studyInput{path: a})
				}
			}
			if len(ins) == 0 {
				return usageErr(fmt.Errorf("no trace: give --meta-dir DIR, metadata files or traces"))
			}
			start := time.Now()
			as, err := studyAnalyses(ins, t.jobs, cfg, nil)
			if err != nil {
				return err
			}
			_, err = studyTrainAndWrite(t.out, as, t.model(cfg), t.plots)
			if err != nil {
				return err
			}
			for _, a := range as {
				fmt.Fprintf(cmd.OutOrStdout(), "%s\tR=%d\tT=%d\t%s\tidle=%.2f\tsamples=%d\n", a.Trace, a.R, a.T, a.Class.State, a.Class.IdleFraction, a.Samples)
			}
			log.Info().Int("traces", len(as)).Dur("took", time.Since(start)).Str("model", filepath.Join(t.out, "window-model.json")).Msg("trained")
			return nil
		},
	}
	t.register(cmd)
	cmd.Flags().StringVar(&t.metaDir, "meta-dir", "", "directory of *.meta.json files written by 'tracecast synth'")
	cmd.Flags().StringVarP(&t.out, "output", "o", "", "output directory")
	return cmd
}

// studyTrainAndWrite fits the model and writes it with the per-trace outputs and plots.
func studyTrainAndWrite(dir string, as []*studyAnalysis, m *surface.Model, plots bool) (*surface.Model, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	byR, err := studyBuildModel(as, m)
	if err != nil {
		return nil, err
	}
	if err := studyWriteJSON(filepath.Join(dir, "window-model.json"), m); err != nil {
		return nil, err
	}
	if err := writeStudyOutputs(dir, as); err != nil {
		return nil, err
	}
	if plots {
		if err := studyModelPlots(filepath.Join(dir, "plots"), m, byR); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// windowFromModel is the window size (samples) the model file at path gives
// for R workers and a DAG of T tasks: linear in T between the trained DAG
// sizes and in log2 R between the trained cluster sizes, clamped at the ends.
func windowFromModel(path string, R, T int) (int, error) {
	m, err := surface.Load(path)
	if err != nil {
		return 0, err
	}
	return m.Window(R, T)
}

var _ = math.Abs
var _ = strconv.Itoa

// tasksInTrace counts the tasks of a StarPU trace (the states of its
// workers that the StarPU rules call compute): the DAG size T for
// windowFromModel when it is not given. It reads the trace once more.
func tasksInTrace(path string) (int, error) {
	rules := signal.StarPU()
	if err := rules.Compile(); err != nil {
		return 0, err
	}
	f, name, closeIn, err := openInput(path)
	if err != nil {
		return 0, err
	}
	defer closeIn()
	o := paje.DefaultOptions()
	o.Name = name
	n := 0
	_, err = paje.Read(f, o, func(es []tracecast.Entity) error {
		for i := range es {
			e := &es[i]
			if e.Nature == tracecast.NatureState && e.Type == rules.StateType && e.End > e.Start && rules.Classify(e.Value) == signal.Compute {
				n++
			}
		}
		return nil
	})
	return n, err
}
