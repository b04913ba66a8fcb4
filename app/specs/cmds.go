package specs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/tracecast/tracecast/app/builtin"
	fc "github.com/tracecast/tracecast/forecast"
	"github.com/tracecast/tracecast/internal/cliflags"
	"github.com/tracecast/tracecast/models/modelio"
	"github.com/tracecast/tracecast/pipelines/component"
	"github.com/tracecast/tracecast/report"
	"github.com/tracecast/tracecast/stats/ks"
	"github.com/tracecast/tracecast/study"
)

// Verify is the verify command's options.
type Verify struct {
	Rules   string `flag:"rules" help:"state classes: auto, starpu, smpi (as the forecasts used)"`
	Format  string `flag:"format" help:"table or jsonl (score records)"`
	Workers int    `flag:"workers" help:"R, the selected containers (default: counted in the trace)"`
	RunID   string `flag:"run" help:"score the forecasts of this run id only, against TRACE whatever its own run id (default: the file's forecasts, which must be of TRACE's run)"`
	Explain bool   `flag:"explain" help:"also say what carried the forecasts: the explanation records (predict --explain, a forecast stage's explain: true) of FORECASTS.jsonl, or of explain.jsonl beside it, as a table (--format jsonl: the records)"`
}

// RunVerify scores the forecasts of the file forecasts against the trace
// t and writes the scores to w as o.Format says.
func (r Runner) RunVerify(ctx context.Context, t Trace, o Verify, forecasts string, w io.Writer) error {
	if o.Format != "table" && o.Format != "jsonl" {
		return cliflags.Usage(fmt.Errorf("--format %q: want table or jsonl", o.Format))
	}
	scores, err := r.Verify(ctx, t, o.Rules, o.Workers, forecasts, o.RunID)
	if err != nil {
		return err
	}
	xs, err := explanations(forecasts, scores, o.Explain)
	if err != nil {
		return err
	}
	if o.Format == "table" {
		if err := fc.WriteTable(w, scores); err != nil || !o.Explain {
			return err
		}
		fmt.Fprintln(w)
		return fc.WriteExplanations(w, xs)
	}
	if err := fc.WriteScores(w, scores); err != nil {
		return err
	}
	return fc.WriteExplanationRecords(w, xs)
}

// FitModelCmd is the fit-model command's options: a table's, or StarPU's
// sampling directory's.
type FitModelCmd struct {
	modelio.TaskFit
	Regressors string `flag:"regressors" help:"comma-separated pool functions allowed: x^-2,x^-1,x^-0.5,log2(x),x^0.5,x,x^2,x*y"`
	Out        string `flag:"output,o" help:"write the models here (JSON)"`
	Plots      string `flag:"plots" help:"directory for measured-vs-predicted and residual plots (PNG, SVG)"`
	StarPUDir  string `flag:"starpu-dir" help:"fit every codelet of StarPU's sampling directory ($STARPU_HOME or its .starpu/sampling/codelets)"`
	WriteBack  bool   `flag:"write-back" help:"with --starpu-dir: write the least-squares coefficients of the declared monomials into StarPU's model files (a .bak of each kept)"`
}

// Run checks the options (usage errors) and fits the file ("" with
// StarPUDir), printing on w (what was skipped on errw).
func (o FitModelCmd) Run(w, errw io.Writer, file string) error {
	if err := o.Check(o.Regressors); err != nil {
		return cliflags.Usage(err)
	}
	if err := o.CheckSources(file, o.StarPUDir, o.WriteBack); err != nil {
		return cliflags.Usage(err)
	}
	if o.StarPUDir != "" {
		return FitStarPU(w, errw, o.StarPUDir, o.TaskFit, o.WriteBack, o.Out, o.Plots)
	}
	return FitModel(w, file, o.TaskFit, o.Out, o.Plots)
}

// PredictTask is the predict-task command: q's prediction printed on w as
// an indented JSON object; a question the model cannot answer is a usage
// error.
func PredictTask(w io.Writer, q modelio.TaskQuery) error {
	p, err := q.Predict()
	var qe *modelio.QueryError
	if errors.As(err, &qe) {
		return cliflags.Usage(err)
	} else if err != nil {
		return err
	}
	out := map[string]any{"group": p.Group, "target": p.Target, "value": p.Value, "cluster": p.Cluster,
		"model": report.Formula(p.Target, p.Model), "n": p.Model.N, "rmse": p.Model.RMSE}
	if len(p.Unused) > 0 {
		out["unused_params"] = p.Unused
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// Hitrate is the hitrate command's KS options, as the user wrote them.
type Hitrate struct {
	Method  string  `flag:"method" help:"p-value method: matlab, scipy, r"`
	Alpha   float64 `flag:"alpha" help:"significance level, in (0, 1)"`
	Windows string  `flag:"windows" help:"window sizes in samples: a list (1000,2000) or FROM:TO:STEP; at most 10000 sizes"`
}

// RunHitrate checks o (usage errors), sweeps the trace's signal and writes
// a result per window size to w: a table when terminal, else JSON lines.
// The trace's classification is logged.
func (r Runner) RunHitrate(ctx context.Context, t Trace, s Signal, o Hitrate, w io.Writer, terminal bool) error {
	m, err := ks.ParseFlags(o.Method, o.Alpha)
	if err != nil {
		return cliflags.Usage(err)
	}
	ws, err := ks.ParseWindows(o.Windows)
	if err != nil {
		return cliflags.Usage(err)
	}
	h := &study.Hitrates{Trace: t.Name(), Windows: ws, Method: m, Alpha: o.Alpha}
	if err := r.Hitrates(ctx, t, s, h); err != nil {
		return err
	}
	if cl, ok := h.Classification(); ok {
		r.Log.Info().Str("trace", h.Trace).Str("state", string(cl.State)).Float64("idle_fraction", cl.IdleFraction).Msg("trace state")
	}
	return h.WriteResults(w, terminal)
}

// KSFiles is the ks command: the two-sample test on the samples of two
// files (one non-negative integer per line), its record written to w. A
// bad method or alpha is a usage error.
func KSFiles(w io.Writer, method string, alpha float64, files [2]string) error {
	m, err := ks.ParseFlags(method, alpha)
	if err != nil {
		return cliflags.Usage(err)
	}
	var samples [2][]int
	for i, path := range files {
		if samples[i], err = ks.ReadSampleFile(path); err != nil {
			return err
		}
	}
	return ks.TestSamples(samples[0], samples[1], m, alpha).WriteJSON(w, alpha)
}

// Validate is the validate command: every pipeline file loaded and
// checked as LoadPipeline does (the first bad one stops it), a line per
// file on w and its warnings on errw.
func Validate(w, errw io.Writer, files []string) error {
	for _, a := range files {
		cfg, err := LoadPipeline(a, nil)
		if err != nil {
			return err
		}
		for _, warn := range cfg.Warnings {
			fmt.Fprintf(errw, "%s: warning: %s\n", a, warn)
		}
		fmt.Fprintf(w, "%s: ok (%d sources, %d stages, %d sinks)\n", a, len(cfg.Sources), len(cfg.Stages), len(cfg.Sinks))
	}
	return nil
}

// Components is the components command: the built-in component types (all
// of them, or the one named), with their options, as a table on w. An
// unknown name is a usage error.
func Components(w io.Writer, names []string) error {
	var ds []component.Description
	for _, d := range builtin.Registry().Describe() {
		if len(names) == 0 || d.Name == names[0] {
			ds = append(ds, d)
		}
	}
	if len(ds) == 0 {
		return cliflags.Usage(fmt.Errorf("no component type %q", names[0]))
	}
	return component.WriteTable(w, ds)
}

// Check refuses, as a usage error, an option of the power streams given
// (fs says which were) without a power stream.
func (p ReportPower) Check(fs *pflag.FlagSet) error {
	for _, f := range []string{"power-format", "metric", "node", "map", "node-type", "offset", "max-gap", "lateness"} {
		if len(p.Powers) == 0 && fs.Changed(f) {
			return cliflags.Usage(fmt.Errorf("--%s is an option of the power streams: give --power", f))
		}
	}
	return nil
}
