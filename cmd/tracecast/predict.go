package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/internal/input"
	"github.com/tracecast/tracecast/pipelines"
	"github.com/tracecast/tracecast/stages/predict"
	"github.com/tracecast/tracecast/stats/ks"
	"github.com/tracecast/tracecast/study"
	"golang.org/x/term"
)

func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

func newKSCmd() *cobra.Command {
	var method string
	var alpha float64
	cmd := &cobra.Command{
		Use:   "ks [--method matlab|scipy|r] [--alpha A] FILE1 FILE2",
		Short: "Two-sample Kolmogorov-Smirnov test on two samples of integers",
		Long: `ks reads two samples, one non-negative integer per line (plain or gzip), and
prints one JSON object: n1, n2, d (exact, from integer counts), d_num/d_den,
p, reject (p < alpha), hit (not rejected), method and whether p is exact.
p as MATLAB's kstest2 computes it (matlab, the default), as SciPy's
ks_2samp (scipy) or as R's ks.test (r).`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := ks.ParseMethod(method)
			if err != nil {
				return usageErr(err)
			}
			var samples [2][]int
			for i, path := range args {
				r, name, closeIn, err := input.Open(path)
				if err != nil {
					return err
				}
				samples[i], err = ks.ReadSample(r, name)
				closeIn()
				if err != nil {
					return err
				}
			}
			return json.NewEncoder(os.Stdout).Encode(ks.TestSamples(samples[0], samples[1], m, alpha).Record(alpha))
		},
	}
	cmd.Flags().StringVar(&method, "method", "matlab", "p-value method: matlab, scipy, r")
	cmd.Flags().Float64Var(&alpha, "alpha", 0.05, "significance level: reject H0 (same distribution) when p < alpha")
	return cmd
}

func newHitrateCmd() *cobra.Command {
	var f signalFlags
	var method, windows string
	var alpha float64
	cmd := &cobra.Command{
		Use:   "hitrate [flags] TRACE",
		Short: "KS hit-rate of consecutive windows for many window sizes, in one pass",
		Long: `hitrate samples the trace's signal (see 'tracecast signal'), cuts it into
consecutive windows of w samples for every w of --windows, compares each
window with the previous one (two-sample KS test) and prints, per window
size: samples, compared (pairs of windows; a trailing partial window is not
compared), hits (same distribution not rejected at --alpha) and hit_rate.
One JSON line per size; a table on a terminal.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := ks.ParseMethod(method)
			if err != nil {
				return usageErr(err)
			}
			ws, err := ks.ParseWindows(windows)
			if err != nil {
				return usageErr(err)
			}
			h := &study.Hitrates{Trace: traceName(args[0]), Windows: ws, Method: m, Alpha: alpha}
			spec := pipelines.Spec{Name: "hitrate", Sources: []pipelines.Node{traceSource(args[0], f.lenient, f.noStrict)},
				Stages: []pipelines.Node{f.stage("signal")}, Sinks: []pipelines.Node{{ID: "sweep", Type: "sweep", Inputs: []string{"signal"}}}}
			if err := runSpec(cmd.Context(), spec, map[string]tracecast.Sink{"sweep": h}); err != nil {
				return err
			}
			if cl, ok := h.Classification(); ok {
				log.Info().Str("trace", h.Trace).Str("state", string(cl.State)).Float64("idle_fraction", cl.IdleFraction).Msg("trace state (seed 004 §IV-B)")
			}
			return h.WriteResults(os.Stdout, isTerminal(os.Stdout))
		},
	}
	f.register(cmd)
	cmd.Flags().StringVar(&method, "method", "matlab", "p-value method: matlab, scipy, r")
	cmd.Flags().Float64Var(&alpha, "alpha", 0.05, "significance level")
	cmd.Flags().StringVar(&windows, "windows", "1000:50000:1000", "window sizes in samples: a list (1000,2000) or FROM:TO:STEP")
	return cmd
}

// traceName names a trace in records: its path, <stdin> for -.
func traceName(path string) string {
	if path == "-" {
		return "<stdin>"
	}
	return path
}

// predictFlags are predict's flags.
type predictFlags struct {
	signalFlags
	window        int
	queries       []string
	method        string
	alpha         float64
	idleThreshold float64
	regimeMisses  int
	model         string
	tasks         int
	fc            forecastFlags
}

func (p *predictFlags) register(cmd *cobra.Command) {
	p.signalFlags.register(cmd)
	p.fc.register(cmd)
	fl := cmd.Flags()
	fl.IntVar(&p.window, "window", 0, "KS windows instead of horizons: the window size in samples")
	fl.StringVar(&p.model, "model", "", "KS windows with the window size from a model written by 'tracecast train', for the trace's workers and --tasks")
	fl.IntVar(&p.tasks, "tasks", 0, "number of tasks for --model (0: counted in the trace, which reads it twice)")
	fl.StringArrayVar(&p.queries, "query", []string{"idle>=25%"}, "CLASS>=COUNT or CLASS>=PERCENT% of the selected containers (repeatable)")
	fl.StringVar(&p.method, "method", "matlab", "forecast method: auto (default), ks-paper, persistence, climatology, markov; with --window, the KS p-value method: matlab (default), scipy, r")
	fl.Float64Var(&p.alpha, "alpha", 0.05, "KS significance level")
	fl.Float64Var(&p.idleThreshold, "idle-threshold", 0.8, "an idle-opportunity episode opens when a forecast's p (with --window: a prediction's likelihood) reaches this (0: never)")
	fl.IntVar(&p.regimeMisses, "regime-misses", 3, "raise a regime-change alert after this many KS misses in a row (0: never)")
}

// windows runs the KS windows (--window or --model) on the trace through
// the predict stage; with outDir, its records are also written as Arrow
// files there.
func (p *predictFlags) windows(ctx context.Context, path, outDir string) (*predict.Results, error) {
	if p.window <= 0 && p.model == "" {
		return nil, usageErr(fmt.Errorf("--window W (samples) or --model FILE is required"))
	}
	name := traceName(path)
	if p.model != "" {
		if path == "-" { // the model needs R first: the input is read twice
			if p.tasks <= 0 {
				return nil, usageErr(fmt.Errorf("--model on standard input needs --tasks T"))
			}
			tmp, err := input.Spool(os.Stdin)
			if err != nil {
				return nil, err
			}
			defer os.Remove(tmp)
			path = tmp
		}
		r, err := p.containers(ctx, path)
		if err != nil {
			return nil, err
		}
		if p.window > 0 {
			return nil, usageErr(fmt.Errorf("give --window or --model, not both"))
		}
		w, T, err := study.ModelWindow(p.model, path, r, p.tasks)
		if err != nil {
			return nil, err
		}
		p.window = w
		log.Info().Str("model", p.model).Int("r", r).Int("t", T).Int("window", w).Msg("window from the model")
	}
	st := p.stage("predict")
	maps.Copy(st.Options, map[string]any{"window": p.window, "queries": p.queries, "method": p.method, "alpha": p.alpha,
		"idle_threshold": p.idleThreshold, "regime_misses": p.regimeMisses, "trace": predict.TraceID(name)})
	spec := pipelines.Spec{Name: "predict", Sources: []pipelines.Node{traceSource(path, p.lenient, p.noStrict)},
		Stages: []pipelines.Node{st}, Sinks: []pipelines.Node{{ID: "results", Type: "results", Inputs: []string{"predict"}}}}
	for _, r := range []string{"windows", "predictions", "verdicts", "alerts"} {
		if outDir != "" {
			spec.Sinks = append(spec.Sinks, pipelines.Node{ID: r, Type: "arrow", Inputs: []string{"predict"},
				Options: map[string]any{"path": filepath.Join(outDir, r+".arrow"), "records": r}})
		}
	}
	res := &predict.Results{}
	return res, runSpec(ctx, spec, map[string]tracecast.Sink{"results": res})
}

// containers reads the trace's signal once for R, the number of selected
// containers (the window-size model's input).
func (p *predictFlags) containers(ctx context.Context, path string) (int, error) {
	r := -1
	spec := pipelines.Spec{Name: "predict", Sources: []pipelines.Node{traceSource(path, p.lenient, p.noStrict)},
		Stages: []pipelines.Node{p.stage("signal")}, Sinks: []pipelines.Node{{ID: "r", Type: "r", Inputs: []string{"signal"}}}}
	err := runSpec(ctx, spec, map[string]tracecast.Sink{"r": pipelines.SinkFunc(func(_ context.Context, b tracecast.Batch) error {
		if r < 0 && b.Meta != nil {
			r, _ = strconv.Atoi(b.Meta["r"])
		}
		return nil
	})})
	if err == nil && r < 0 {
		err = fmt.Errorf("%s: the signal has no samples", traceName(path))
	}
	return r, err
}

func newPredictCmd() *cobra.Command {
	var p predictFlags
	var out string
	cmd := &cobra.Command{
		Use:   "predict TRACE [--horizon D]... [--every D] [--query 'idle>=25%']... [--method M] [--format jsonl|arrow] [-o DIR]",
		Short: "Forecast idle capacity over a consumer's horizons (or over KS windows with --window)",
		Long: `predict forecasts, every --every of trace time t, for each --horizon H and
--query (idle>=25%: at least 25% of the selected containers idle): p, the
fraction of [t, t+H) during which the query will hold, mean, the mean
fraction of idle containers, and an interval [lo, hi] meant to hold p with
probability --coverage. Forecasts use only the trace up to t. Methods: auto
(default: a combination learnt from the outcomes already known), ks-paper
(the last H), persistence, climatology, markov. Alerts are episodes:
idle-opportunity while p stays at or above --idle-threshold, regime-change
while the idle share moves more than it did before (--regime-alpha).
Output: forecast, outcome, episode and skill records as JSON lines on
standard output, or files in DIR (-o; --format arrow for Arrow files); on
a terminal, a table of scores. --verify scores the forecasts against what
happened. Definitions: docs/forecasts.md.

With --window W (or --model), predict cuts the trace's signal (see
'tracecast signal') into consecutive windows of W samples and predicts each
window from the previous one: P(X >= k) for each --query. A verdict record
follows each prediction (KS test between the two windows), alerts flag idle
opportunities and --regime-misses KS misses in a row. Output: JSON lines,
or with -o DIR windows.arrow, predictions.arrow, verdicts.arrow,
alerts.arrow and records.jsonl. Every record has a deterministic id.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out != "" {
				if err := os.MkdirAll(out, 0o755); err != nil {
					return err
				}
			}
			if p.window == 0 && p.model == "" {
				return p.forecast(cmd.Context(), cmd, args[0], out)
			}
			res, err := p.windows(cmd.Context(), args[0], out)
			if err != nil {
				return err
			}
			period, _ := strconv.ParseFloat(res.Meta["period"], 64)
			log.Info().Int("windows", len(res.Windows)).Int("predictions", len(res.Predictions)).Int("verdicts", len(res.Verdicts)).
				Int("alerts", len(res.Alerts)).Float64("horizon_s", float64(p.window)*period/tracecast.PerSecond(res.Meta["time_unit"])).Msg("prediction phase")
			if out == "" {
				return res.WriteJSONL(os.Stdout, false)
			}
			f, err := os.Create(filepath.Join(out, "records.jsonl"))
			if err != nil {
				return err
			}
			defer f.Close()
			return res.WriteJSONL(f, true)
		},
	}
	p.register(cmd)
	cmd.Flags().StringVarP(&out, "output", "o", "", "directory for the output files (default: JSON lines on standard output)")
	return cmd
}
