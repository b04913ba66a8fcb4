package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/pipelines"
	"github.com/tracecast/tracecast/sinks/jsonl"
	"github.com/tracecast/tracecast/stages/predict"
	"github.com/tracecast/tracecast/stages/signal"
	"github.com/tracecast/tracecast/stats/ks"
	"github.com/tracecast/tracecast/stats/surface"
	"golang.org/x/term"
)

func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

func newKSCmd() *cobra.Command {
	var method string
	var alpha float64
	cmd := &cobra.Command{
		Use:   "ks [--method matlab|scipy|r] [--alpha A] FILE1 FILE2",
		Short: "Two-sample Kolmogorov-Smirnov test on two samples of integers",
		Long: `ks reads two samples, one non-negative integer per line, and prints one JSON
object: n1, n2, d (exact, from integer counts), d_num/d_den, p, reject (p < α),
hit (not rejected), method and whether the p-value is exact.

Methods: matlab (kstest2's asymptotic formula with Stephens' correction — what
seed 004 used, the default), scipy (scipy.stats.ks_2samp, method='auto'), r
(R's ks.test default: exact conditional on ties when n1·n2 < 10000).`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := ks.ParseMethod(method)
			if err != nil {
				return usageErr(err)
			}
			a, err := readInts(args[0])
			if err != nil {
				return err
			}
			b, err := readInts(args[1])
			if err != nil {
				return err
			}
			r := 0
			for _, x := range append(append([]int(nil), a...), b...) {
				r = max(r, x)
			}
			res := ks.Test(ks.HistOf(r, a...), ks.HistOf(r, b...), m, alpha)
			out := map[string]any{"n1": res.N1, "n2": res.N2, "d": res.D, "d_num": res.DNum, "d_den": res.DDen,
				"p": res.P, "reject": res.Reject, "hit": !res.Reject, "method": string(res.Method), "exact": res.Exact, "alpha": alpha}
			return json.NewEncoder(os.Stdout).Encode(out)
		},
	}
	cmd.Flags().StringVar(&method, "method", "matlab", "p-value method: matlab, scipy, r")
	cmd.Flags().Float64Var(&alpha, "alpha", 0.05, "significance level: reject H0 (same distribution) when p < alpha")
	return cmd
}

// readInts reads one non-negative integer per line (blank lines and #
// comments skipped); a bad line is an error naming it.
func readInts(path string) ([]int, error) {
	in, name, closeIn, err := openInput(path)
	if err != nil {
		return nil, err
	}
	defer closeIn()
	var xs []int
	sc := bufio.NewScanner(in)
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" || s[0] == '#' {
			continue
		}
		v, err := strconv.Atoi(s)
		if err != nil || v < 0 {
			return nil, fmt.Errorf("%s:%d: want a non-negative integer, got %q", name, line, s)
		}
		xs = append(xs, v)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(xs) == 0 {
		return nil, fmt.Errorf("%s: no samples", name)
	}
	return xs, nil
}

// parseWindows reads "1000,2000,5000" or "1000:50000:1000" (from:to:step).
func parseWindows(s string) ([]int, error) {
	if p := strings.Split(s, ":"); len(p) == 3 {
		from, e1 := strconv.Atoi(p[0])
		to, e2 := strconv.Atoi(p[1])
		step, e3 := strconv.Atoi(p[2])
		if e1 != nil || e2 != nil || e3 != nil || from <= 0 || step <= 0 || to < from {
			return nil, fmt.Errorf("--windows %q: want FROM:TO:STEP with positive integers", s)
		}
		var ws []int
		for w := from; w <= to; w += step {
			ws = append(ws, w)
		}
		return ws, nil
	}
	var ws []int
	for _, f := range strings.Split(s, ",") {
		w, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || w <= 0 {
			return nil, fmt.Errorf("--windows %q: %q is not a positive window size", s, f)
		}
		ws = append(ws, w)
	}
	return ws, nil
}

func newHitrateCmd() *cobra.Command {
	var f signalFlags
	var method, windows string
	var alpha float64
	cmd := &cobra.Command{
		Use:   "hitrate [flags] TRACE",
		Short: "KS hit-rate of consecutive windows for many window sizes, in one pass",
		Long: `hitrate samples the trace's occurrence signal (see 'tracecast signal'), cuts it
into consecutive non-overlapping windows of w samples for every w of
--windows, compares each window with the previous one with the two-sample KS
test, and prints per window size: window, samples (of the signal), compared
(pairs of windows; a trailing partial window is not compared), hits (H0 not
rejected at --alpha) and hit_rate (null, "-" on a terminal, when nothing was
compared: the trace is shorter than two windows). One JSON line per size, a
table on a terminal. All sizes are computed in one pass over the signal.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := ks.ParseMethod(method)
			if err != nil {
				return usageErr(err)
			}
			ws, err := parseWindows(windows)
			if err != nil {
				return usageErr(err)
			}
			// One pass, the signal never held: O(R × window sizes) memory.
			h := &hitrates{trace: traceName(args[0]), windows: ws, method: m, alpha: alpha}
			spec := pipelines.Spec{Name: "hitrate", Sources: []pipelines.Node{traceSource(args[0], f.lenient, f.noStrict)},
				Stages: []pipelines.Node{f.stage("signal")}, Sinks: []pipelines.Node{{ID: "sweep", Type: "sweep", Inputs: []string{"signal"}}}}
			if err := runSpec(cmd.Context(), spec, map[string]tracecast.Sink{"sweep": pipelines.SinkFunc(h.add)}); err != nil {
				return err
			}
			if h.sw == nil {
				return fmt.Errorf("%s: the signal has no samples", h.trace)
			}
			if h.class == signal.Idle.String() {
				cl := h.classifier.Result()
				log.Info().Str("trace", h.trace).Str("state", string(cl.State)).Float64("idle_fraction", cl.IdleFraction).Msg("trace state (seed 004 §IV-B)")
			}
			return printHitrates(os.Stdout, h, h.sw.Results(), string(m))
		},
	}
	f.register(cmd)
	cmd.Flags().StringVar(&method, "method", "matlab", "p-value method: matlab, scipy, r")
	cmd.Flags().Float64Var(&alpha, "alpha", 0.05, "significance level")
	cmd.Flags().StringVar(&windows, "windows", "1000:50000:1000", "window sizes in samples: a list (1000,2000) or FROM:TO:STEP")
	return cmd
}

// hitrates sweeps the window sizes over the signal stage's samples; the
// first batch's metadata gives R, the period and the unit.
type hitrates struct {
	trace, class  string
	windows       []int
	method        ks.Method
	alpha, period float64
	unit          string
	r             int
	sw            *ks.Sweeper
	classifier    surface.Classifier
}

func (h *hitrates) add(_ context.Context, b tracecast.Batch) error {
	ss, ok := b.Items.([]tracecast.Sample)
	if !ok {
		return nil
	}
	if h.sw == nil {
		h.r, _ = strconv.Atoi(b.Meta["r"])
		h.period, _ = strconv.ParseFloat(b.Meta["period"], 64)
		h.unit, h.class = b.Meta["time_unit"], b.Meta["class"]
		h.sw = ks.NewSweeper(h.r, h.windows, h.method, h.alpha)
		h.classifier = surface.Classifier{R: h.r}
	}
	for _, x := range ss {
		h.sw.Add(int(x.X))
		h.classifier.Add(int(x.X))
	}
	return nil
}

// traceName names a trace in records: its path, <stdin> for -.
func traceName(path string) string {
	if path == "-" {
		return "<stdin>"
	}
	return path
}

func printHitrates(w io.Writer, s *hitrates, res []ks.SweepResult, method string) error {
	if f, ok := w.(*os.File); ok && isTerminal(f) {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "window\tsamples\tcompared\thits\thit_rate\twindow_s\t\n")
		for _, r := range res {
			rate := "-" // nothing compared: no rate
			if h := r.Rate(); h != nil {
				rate = fmt.Sprintf("%.4f", *h)
			}
			fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%s\t%.4g\t\n", r.Window, r.Samples, r.Compared, r.Hits, rate, float64(r.Window)*s.period/tracecast.PerSecond(s.unit))
		}
		return tw.Flush()
	}
	enc := json.NewEncoder(w)
	for _, r := range res {
		if err := enc.Encode(map[string]any{"trace": s.trace, "class": s.class, "window": r.Window, "samples": r.Samples,
			"compared": r.Compared, "hits": r.Hits, "hit_rate": r.Rate(), "method": method, "period": s.period,
			"window_s": float64(r.Window) * s.period / tracecast.PerSecond(s.unit), "r": s.r}); err != nil {
			return err
		}
	}
	return nil
}

// predictFlags are the prediction phase's settings.
type predictFlags struct {
	signalFlags
	window        int
	queries       []string
	method        string
	alpha         float64
	idleThreshold float64
	regimeMisses  int
	studyModelFlags
	fc forecastFlags
}

func (p *predictFlags) register(cmd *cobra.Command) {
	p.signalFlags.register(cmd)
	p.registerModel(cmd)
	p.fc.register(cmd)
	fl := cmd.Flags()
	fl.IntVar(&p.window, "window", 0, "seed 004's windows: window size w in samples (instead of horizons)")
	fl.StringArrayVar(&p.queries, "query", []string{"idle>=25%"}, "CLASS>=COUNT or CLASS>=PERCENT% of the selected containers (repeatable)")
	fl.StringVar(&p.method, "method", "matlab", "forecast method: auto (default), ks-paper, persistence, climatology, markov; with --window, the KS p-value method: matlab (default), scipy, r")
	fl.Float64Var(&p.alpha, "alpha", 0.05, "KS significance level")
	fl.Float64Var(&p.idleThreshold, "idle-threshold", 0.8, "an idle-opportunity episode opens when a forecast's p (with --window: a prediction's likelihood) reaches this (0: never)")
	fl.IntVar(&p.regimeMisses, "regime-misses", 3, "raise a regime-change alert after this many KS misses in a row (0: never)")
}

// results collects what the engines produce.
type results struct {
	windows     []tracecast.Window
	predictions []tracecast.Prediction
	verdicts    []tracecast.Verdict
	alerts      []tracecast.Alert
	meta        map[string]string // the stage's: time unit, period, rules
}

// run runs the prediction phase on the trace through the predict stage;
// with outDir, its windows, predictions, verdicts and alerts are also
// written as Arrow files there.
func (p *predictFlags) run(ctx context.Context, path, outDir string) (*results, error) {
	if p.window <= 0 && p.model == "" {
		return nil, usageErr(fmt.Errorf("--window W (samples) or --model FILE is required"))
	}
	name := traceName(path)
	if p.model != "" {
		if path == "-" {
			if p.tasks <= 0 { // standard input cannot be read a second time
				return nil, usageErr(fmt.Errorf("--model on standard input needs --tasks T"))
			}
			// The model needs R before the prediction phase starts: two
			// reads, so standard input is kept in a temporary file.
			tmp, err := spool(os.Stdin)
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
		if err := p.applyModel(path, r, &p.window); err != nil {
			return nil, err
		}
	}
	st := p.stage("predict")
	maps.Copy(st.Options, map[string]any{"window": p.window, "queries": p.queries, "method": p.method, "alpha": p.alpha,
		"idle_threshold": p.idleThreshold, "regime_misses": p.regimeMisses, "trace": predict.TraceID(name)})
	spec := pipelines.Spec{Name: "predict", Sources: []pipelines.Node{traceSource(path, p.lenient, p.noStrict)},
		Stages: []pipelines.Node{st}, Sinks: []pipelines.Node{{ID: "results", Type: "results", Inputs: []string{"predict"}}}}
	if outDir != "" {
		for _, r := range []string{"windows", "predictions", "verdicts", "alerts"} {
			spec.Sinks = append(spec.Sinks, pipelines.Node{ID: r, Type: "arrow", Inputs: []string{"predict"},
				Options: map[string]any{"path": filepath.Join(outDir, r+".arrow"), "records": r}})
		}
	}
	res := &results{}
	collect := pipelines.SinkFunc(func(_ context.Context, b tracecast.Batch) error {
		switch items := b.Items.(type) {
		case []tracecast.Window:
			res.windows = append(res.windows, items...)
		case []tracecast.Prediction:
			res.predictions = append(res.predictions, items...)
		case []tracecast.Verdict:
			res.verdicts = append(res.verdicts, items...)
		case []tracecast.Alert:
			res.alerts = append(res.alerts, items...)
		}
		if res.meta == nil {
			res.meta = b.Meta
		}
		return nil
	})
	if err := runSpec(ctx, spec, map[string]tracecast.Sink{"results": collect}); err != nil {
		return nil, err
	}
	return res, nil
}

// spool copies r into a temporary file and returns its path.
func spool(r io.Reader) (string, error) {
	f, err := os.CreateTemp("", "tracecast-stdin-*")
	if err != nil {
		return "", err
	}
	_, err = io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
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
		Short: "Forecast idle capacity over a consumer's horizons (or seed 004's windows with --window)",
		Long: `predict forecasts, every --every of trace time t, for each --horizon H and
--query (idle>=25%: at least k = ⌈25%·R⌉ of the R selected containers idle):
p, the fraction of [t, t+H) during which at least k containers will be idle,
mean, the mean fraction of idle containers (worker_seconds = mean·R·H), and
an interval [lo, hi] meant to hold the outcome of p with --coverage. Every
method is causal (a forecast at t uses the trace up to t): auto (the
default: an online combination learnt from the outcomes known at t),
ks-paper (seed 004's: the last H), persistence, climatology, markov.
Durations take a unit: 500us, 10ms, 2s. Output: forecast and outcome
records as JSON lines on standard output (or DIR/forecasts.jsonl,
outcomes.jsonl; --format arrow for Arrow files); on a terminal, a table of
scores. Alerts are episodes with a start and an end: idle-opportunity while
p stays at or above --idle-threshold, regime-change while the idle share
moves between windows more than the run's own past moves (--regime-alpha). --verify scores the forecasts against what happened (MSE, skill
against persistence, climatology and ks-paper, coverage). Definitions:
docs/forecasts.md.

With --window W (or --model), predict runs seed 004's prediction phase
instead: it samples the trace's occurrence signal, cuts it into consecutive
windows of W samples and, after each window, predicts the next one from this
window's ECDF: P(X ≥ k) for each --query (k a count, or a percentage of the
selected containers, rounded up), with the horizon in seconds. When the next
window completes, a verdict record gives the KS test between the two windows
(p, hit/miss) for that prediction, and the observed P(X ≥ k). Alerts: an
idle opportunity when an idle query's likelihood reaches --idle-threshold, a
regime change after --regime-misses KS misses in a row.

Output: JSON lines on standard output ({"record": "prediction"|"verdict"|
"alert", ...}), or with -o DIR the Arrow files DIR/windows.arrow,
predictions.arrow, verdicts.arrow and alerts.arrow plus the same records as
DIR/records.jsonl. Every prediction, verdict and alert has a deterministic id
(trace/w<window>/...) so consumers can de-duplicate.`,
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
			res, err := p.run(cmd.Context(), args[0], out)
			if err != nil {
				return err
			}
			period, _ := strconv.ParseFloat(res.meta["period"], 64)
			log.Info().Int("windows", len(res.windows)).Int("predictions", len(res.predictions)).Int("verdicts", len(res.verdicts)).
				Int("alerts", len(res.alerts)).Float64("horizon_s", float64(p.window)*period/tracecast.PerSecond(res.meta["time_unit"])).Msg("prediction phase")
			if out == "" {
				return writeRecordsJSONL(os.Stdout, res, false)
			}
			f, err := os.Create(filepath.Join(out, "records.jsonl"))
			if err != nil {
				return err
			}
			defer f.Close()
			return writeRecordsJSONL(f, res, true)
		},
	}
	p.register(cmd)
	cmd.Flags().StringVarP(&out, "output", "o", "", "directory for Arrow files and records.jsonl (default: JSON lines on standard output)")
	return cmd
}

// writeRecordsJSONL writes predictions, verdicts and alerts (and windows
// when asked) as JSON lines, as the jsonl sink does: "record" first.
func writeRecordsJSONL(w io.Writer, res *results, windows bool) error {
	bw := bufio.NewWriter(w)
	var line []byte
	put := func(rec jsonl.Appender) {
		line = append(rec.AppendJSON(line[:0]), '\n')
		bw.Write(line)
	}
	if windows {
		for _, x := range res.windows {
			put(x)
		}
	}
	for _, x := range res.predictions {
		put(x)
	}
	for _, x := range res.verdicts {
		put(x)
	}
	for _, x := range res.alerts {
		put(x)
	}
	return bw.Flush()
}

func firstErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}
