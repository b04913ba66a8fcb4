package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/tracecast/tracecast"
	fc "github.com/tracecast/tracecast/forecast"
	"github.com/tracecast/tracecast/pipelines"
	stage "github.com/tracecast/tracecast/stages/forecast"
)

// forecastFlags are predict's flags for forecasts over horizons (the
// default mode; --window selects seed 004's windows).
type forecastFlags struct {
	horizons []string
	every    string
	coverage float64
	runID    string
	format   string
	verify   bool
	alpha    float64
	workers  int
}

func (f *forecastFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringArrayVar(&f.horizons, "horizon", nil, "the consumer's horizon H, a duration with a unit: 500us, 10ms, 2s (repeatable; default: 0.1%, 1% and 10% of the run)")
	fl.StringVar(&f.every, "every", "", "issue a forecast every this much trace time (default: the shortest horizon / 10)")
	fl.Float64Var(&f.coverage, "coverage", 0.9, "probability the interval [lo, hi] is meant to have of containing the outcome of p")
	fl.StringVar(&f.runID, "run-id", "", "names the run in every id (default: the trace's directory and file name and a hash of its path and first MiB)")
	fl.StringVar(&f.format, "format", "", "jsonl (forecasts and outcomes as JSON lines; the default when standard output is not a terminal) or arrow (needs -o DIR)")
	fl.IntVar(&f.workers, "workers", 0, "R, the selected containers (default: counted in the trace; from standard input, as they appear)")
	fl.Float64Var(&f.alpha, "regime-alpha", 0.01, "regime-change episodes: the test's false-alarm level per window of the longest horizon (0: none)")
	fl.BoolVar(&f.verify, "verify", false, "score the forecasts against what happened: a table on standard error, DIR/scores.jsonl with -o")
}

// forecast runs the forecast stage on the trace at path.
func (p *predictFlags) forecast(ctx context.Context, cmd *cobra.Command, path, out string) error {
	f := &p.fc
	method := p.method
	if !cmd.Flags().Changed("method") {
		method = string(fc.Auto)
	}
	summary := false
	switch f.format {
	case "":
		summary = out == "" && isTerminal(os.Stdout)
		f.format = "jsonl"
	case "jsonl":
	case "arrow":
		if out == "" {
			return usageErr(fmt.Errorf("--format arrow needs -o DIR"))
		}
	default:
		return usageErr(fmt.Errorf("--format %q: want jsonl or arrow", f.format))
	}
	if path == "-" && f.verify {
		return usageErr(fmt.Errorf("--verify reads the trace twice: give a file, not standard input"))
	}
	runID := f.runID
	if runID == "" {
		var err error
		if runID, err = stage.RunIDOf(path); err != nil {
			return err
		}
	}
	// A first pass over a file: R, the run's span (for default horizons)
	// and what verification scores against.
	var steps *fc.Steps
	if path == "-" {
		if len(f.horizons) == 0 {
			f.horizons = stage.DefaultStageConfig().Horizons
		}
	} else {
		var err error
		if steps, err = traceSteps(ctx, path, p.rules, f.workers, p.lenient, p.noStrict, f.verify || summary); err != nil {
			return err
		}
		if f.workers == 0 {
			f.workers = steps.R[0]
		}
	}
	if len(f.horizons) == 0 {
		span := steps.End - steps.T[0]
		f.horizons = stage.DefaultHorizons(span)
		log.Info().Strs("horizons", f.horizons).Str("run", fmt.Sprintf("%.3gs", span)).Msg("no --horizon: forecasting over 0.1%, 1% and 10% of the run")
	}
	opts := map[string]any{"rules": p.rules, "queries": p.queries, "horizons": f.horizons, "method": method,
		"coverage": f.coverage, "run_id": runID, "opportunity_threshold": p.idleThreshold, "regime_alpha": f.alpha, "workers": f.workers}
	if f.every != "" {
		opts["every"] = f.every
	}
	spec := pipelines.Spec{Name: "predict", Sources: []pipelines.Node{traceSource(path, p.lenient, p.noStrict)},
		Stages: []pipelines.Node{{ID: "forecast", Type: "forecast", Inputs: []string{"trace"}, Options: opts}}}
	var kept []tracecast.Forecast
	episodes := map[string]int{}
	sinks := map[string]tracecast.Sink{}
	if summary || f.verify {
		spec.Sinks = append(spec.Sinks, pipelines.Node{ID: "keep", Type: "keep", Inputs: []string{"forecast"}})
		sinks["keep"] = pipelines.SinkFunc(func(_ context.Context, b tracecast.Batch) error {
			switch items := b.Items.(type) {
			case []tracecast.Forecast:
				kept = append(kept, items...)
			case []tracecast.Episode:
				for _, e := range items {
					if e.State == "open" {
						episodes[e.Kind]++
					}
				}
			}
			return nil
		})
	}
	switch {
	case summary:
	case out == "":
		spec.Sinks = append(spec.Sinks, pipelines.Node{ID: "out", Type: "jsonl", Inputs: []string{"forecast"}, Options: map[string]any{"path": "-"}})
	default:
		for _, rec := range []string{"forecasts", "outcomes", "episodes", "skills"} {
			spec.Sinks = append(spec.Sinks, pipelines.Node{ID: rec, Type: f.format, Inputs: []string{"forecast"},
				Options: map[string]any{"path": filepath.Join(out, rec+"."+f.format), "records": rec}})
		}
	}
	if err := runSpec(ctx, spec, sinks); err != nil {
		return err
	}
	if !summary && !f.verify {
		return nil
	}
	if steps == nil { // standard input on a terminal: nothing to score against
		fmt.Printf("%d forecasts of run %s (method %s); score them with: tracecast verify TRACE FORECASTS.jsonl\n", len(kept), runID, method)
		return nil
	}
	scores, err := fc.Verify(steps, kept)
	if err != nil {
		return err
	}
	w := io.Writer(os.Stderr)
	if summary {
		w = os.Stdout
		fmt.Fprintf(w, "%d forecasts of run %s (method %s), scored against what happened:\n\n", len(kept), runID, method)
	}
	if err := fc.WriteTable(w, scores); err != nil {
		return err
	}
	if summary {
		fmt.Fprintf(w, "\nalerts: %d idle-opportunity episodes (p ≥ %g), %d regime-change episodes\n", episodes["idle-opportunity"], p.idleThreshold, episodes["regime-change"])
		fmt.Fprintf(w, "skill = 1 − MSE/MSE(baseline): above 0 beats the baseline. --format jsonl for the records; docs/forecasts.md.\n")
	}
	if out == "" {
		return nil
	}
	sf, err := os.Create(filepath.Join(out, "scores.jsonl"))
	if err != nil {
		return err
	}
	return firstErr(fc.WriteScores(sf, scores), sf.Close())
}

// traceSteps reads the idle step function of a trace (what forecasts are
// scored against); without whole, its first step and end only.
func traceSteps(ctx context.Context, path, rules string, workers int, lenient, noStrict, whole bool) (*fc.Steps, error) {
	s := stage.NewStepsSink(rules, "idle", "", workers)
	if !whole {
		s.FirstOnly()
	}
	spec := pipelines.Spec{Name: "steps", Sources: []pipelines.Node{traceSource(path, lenient, noStrict)},
		Sinks: []pipelines.Node{{ID: "steps", Type: "steps", Inputs: []string{"trace"}}}}
	if err := runSpec(ctx, spec, map[string]tracecast.Sink{"steps": s}); err != nil {
		return nil, err
	}
	steps, err := s.Steps()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return steps, nil
}

func newVerifyCmd() *cobra.Command {
	var rules, format string
	var lenient, noStrict bool
	var workers int
	cmd := &cobra.Command{
		Use:   "verify TRACE FORECASTS.jsonl",
		Short: "Score forecasts (from predict or a live pipeline) against what happened in the trace",
		Long: `verify reads the forecast records of FORECASTS.jsonl (other records are
skipped) and scores them against the trace they are about: per (query,
horizon), the MSE of p and of mean, the skill against persistence,
climatology and the seed's forecast (ks-paper) at the same issue times, and
the interval coverage; --format jsonl writes score records with the
reliability table. Definitions: docs/forecasts.md.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "table" && format != "jsonl" {
				return usageErr(fmt.Errorf("--format %q: want table or jsonl", format))
			}
			in, name, closeIn, err := openInput(args[1])
			if err != nil {
				return err
			}
			fs, err := fc.ReadForecasts(in, name)
			closeIn()
			if err != nil {
				return err
			}
			steps, err := traceSteps(cmd.Context(), args[0], rules, workers, lenient, noStrict, true)
			if err != nil {
				return err
			}
			scores, err := fc.Verify(steps, fs)
			if err != nil {
				return err
			}
			if format == "table" {
				return fc.WriteTable(os.Stdout, scores)
			}
			return fc.WriteScores(os.Stdout, scores)
		},
	}
	cmd.Flags().StringVar(&rules, "rules", "auto", "state classes: auto, starpu, smpi (as the forecasts used)")
	cmd.Flags().StringVar(&format, "format", "table", "table or jsonl (score records)")
	cmd.Flags().IntVar(&workers, "workers", 0, "R, the selected containers (default: counted in the trace)")
	cmd.Flags().BoolVar(&lenient, "lenient", false, "skip bad trace lines instead of failing")
	cmd.Flags().BoolVarP(&noStrict, "no-strict", "n", false, "accept the deprecated field names of old traces (pj_dump -n)")
	return cmd
}
