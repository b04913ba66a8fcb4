package specs

import (
	"context"
	"io"
	"os"

	fc "github.com/tracecast/tracecast/forecast"
	"github.com/tracecast/tracecast/internal/cliflags"
	"github.com/tracecast/tracecast/internal/paths"
)

// Predict is the predict command: forecasts over horizons, or with
// Window or Model KS windows predicted each from the previous one.
type Predict struct {
	Trace     Trace
	Windows   Windows
	Forecasts Forecasts
	Out       string // a directory; "": records on standard output
	Verify    bool   // score the forecasts against the trace
	Terminal  bool   // standard output is a terminal: a table of scores
}

// Prepare checks, before anything is opened, that none of the files
// predict may write into Out is one of inputs (a usage error), and
// creates Out.
func (p Predict) Prepare(inputs []string) error {
	format := p.Forecasts.Format
	if format == "" {
		format = "jsonl"
	}
	outs := paths.InDir(p.Out, "forecasts."+format, "outcomes."+format, "episodes."+format, "skills."+format, "scores.jsonl", "explain.jsonl",
		"windows.arrow", "predictions.arrow", "verdicts.arrow", "alerts.arrow", "records.jsonl")
	if err := cliflags.Usage(paths.CheckOutputs(inputs, outs...)); err != nil || p.Out == "" {
		return err
	}
	return os.MkdirAll(p.Out, 0o755)
}

// Predict runs p: the windows' records on stdout (the lines -o
// DIR/records.jsonl gets) unless Out is set, or the forecasts, reported as
// ForecastRun.Report does.
func (r Runner) Predict(ctx context.Context, p Predict, stdout, stderr io.Writer) error {
	w, f := p.Windows, p.Forecasts
	if w.Window != 0 || w.Model != "" {
		if w.Method == "" {
			w.Method = "matlab"
		}
		res, err := r.Windows(ctx, p.Trace, w, p.Out, f.Format)
		if err != nil || p.Out != "" {
			return err
		}
		return res.WriteJSONL(stdout, true)
	}
	if w.Method == "" {
		w.Method = string(fc.Auto)
	}
	f.Rules, f.Queries, f.Method, f.Threshold, f.Out, f.Score, f.Terminal = w.Rules, w.Queries, w.Method, w.IdleThreshold, p.Out, p.Verify, p.Terminal
	run, err := r.Forecast(ctx, p.Trace, f)
	if err != nil {
		return err
	}
	return run.Report(stdout, stderr)
}
