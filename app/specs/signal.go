package specs

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/internal/input"
	"github.com/tracecast/tracecast/internal/output"
	"github.com/tracecast/tracecast/pipelines"
	"github.com/tracecast/tracecast/stages/predict"
	"github.com/tracecast/tracecast/study"
)

// SignalFile writes the trace's signal to out: Arrow for a .arrow file,
// Parquet for a .parquet file, CSV for a .csv file or "-" (standard output).
func (r Runner) SignalFile(ctx context.Context, t Trace, s Signal, out string) error {
	typ := strings.TrimPrefix(strings.ToLower(filepath.Ext(out)), ".")
	switch {
	case out == "":
		return &OptionError{Msgs: []string{"-o FILE is required (.arrow, .parquet or .csv, - for CSV on standard output)"}}
	case out == "-":
		typ = "csv"
	case typ != "csv" && typ != "arrow" && typ != "parquet":
		return &OptionError{Msgs: []string{fmt.Sprintf("-o %s: the extension says the format: .arrow, .parquet or .csv", out)}}
	}
	return r.Run(ctx, pipelines.Spec{Name: "signal", Sources: []pipelines.Node{t.Source()}, Stages: []pipelines.Node{s.Stage("signal")},
		Sinks: []pipelines.Node{{ID: "out", Type: typ, Inputs: []string{"signal"}, Options: map[string]any{"path": out, "records": "samples"}}}}, nil)
}

// Hitrates sweeps the trace's signal with h (every window size, one pass).
func (r Runner) Hitrates(ctx context.Context, t Trace, s Signal, h *study.Hitrates) error {
	return r.Run(ctx, pipelines.Spec{Name: "hitrate", Sources: []pipelines.Node{t.Source()}, Stages: []pipelines.Node{s.Stage("signal")},
		Sinks: []pipelines.Node{collect("sweep", "signal")}}, map[string]tracecast.Sink{"sweep": h})
}

// Containers reads the trace's signal once for R, its number of selected
// containers.
func (r Runner) Containers(ctx context.Context, t Trace, s Signal) (int, error) {
	R := -1
	err := r.Run(ctx, pipelines.Spec{Name: "predict", Sources: []pipelines.Node{t.Source()}, Stages: []pipelines.Node{s.Stage("signal")},
		Sinks: []pipelines.Node{collect("r", "signal")}}, map[string]tracecast.Sink{"r": pipelines.SinkFunc(func(_ context.Context, b tracecast.Batch) error {
		if R < 0 && b.Meta != nil {
			R, _ = strconv.Atoi(b.Meta["r"])
		}
		return nil
	})})
	if err == nil && R < 0 {
		err = fmt.Errorf("%s: the signal has no samples", t.Name())
	}
	return R, err
}

// Windows are the options of the KS windows (the predict stage's).
type Windows struct {
	Signal        `flag:"-"` // bound on its own: its defaults vary by command
	Window        int        `flag:"window" help:"KS windows instead of horizons: the window size in samples"` // samples; 0 with Model
	Queries       []string   `flag:"query" help:"CLASS>=COUNT or CLASS>=PERCENT% of the selected containers (repeatable)"`
	Method        string
	Alpha         float64 `flag:"alpha" help:"KS significance level, in (0, 1)"`
	IdleThreshold float64 `flag:"idle-threshold" help:"an idle-opportunity episode opens when a forecast's p (with --window: a prediction's likelihood) reaches this, in [0, 1] (0: never)"`
	RegimeMisses  int     `flag:"regime-misses" help:"with --window, a regime-change alert after this many KS misses in a row (0: never)"`
	// Model, when set, is a window-size model (tracecast train): the
	// window is the model's for the trace's R and Tasks (0: counted in the
	// trace).
	Model string `flag:"model" help:"KS windows with the window size from a model written by 'tracecast train', for the trace's workers and --tasks"`
	Tasks int    `flag:"tasks" help:"number of tasks for --model (0: counted in the trace, which reads it twice)"`
}

// Windows runs the KS windows on the trace through the predict stage;
// with outDir, the windows, predictions, verdicts and alerts are also
// written there as tables of format ("", arrow or jsonl: Arrow files;
// parquet: Parquet files) and all of them to records.jsonl.
func (r Runner) Windows(ctx context.Context, t Trace, o Windows, outDir, format string) (*predict.Results, error) {
	if o.Window <= 0 && o.Model == "" {
		return nil, &OptionError{Msgs: []string{"--window W (samples) or --model FILE is required"}}
	}
	switch format {
	case "", "jsonl", "arrow":
		format = "arrow"
	case "parquet":
		if outDir == "" {
			return nil, &OptionError{Msgs: []string{"--format parquet needs -o DIR"}}
		}
	default:
		return nil, &OptionError{Msgs: []string{fmt.Sprintf("--format %q: want jsonl, arrow or parquet", format)}}
	}
	name := t.Name()
	if o.Model != "" {
		if t.Path == "-" { // the model needs R first: the input is read twice
			if o.Tasks <= 0 {
				return nil, &OptionError{Msgs: []string{"--model on standard input needs --tasks T"}}
			}
			tmp, err := input.Spool(os.Stdin)
			if err != nil {
				return nil, err
			}
			defer os.Remove(tmp)
			t.Path = tmp
		}
		R, err := r.Containers(ctx, t, o.Signal)
		if err != nil {
			return nil, err
		}
		if o.Window > 0 {
			return nil, &OptionError{Msgs: []string{"give --window or --model, not both"}}
		}
		w, T, err := study.ModelWindow(o.Model, t.Path, R, o.Tasks)
		if err != nil {
			return nil, err
		}
		o.Window = w
		r.Log.Info().Str("model", o.Model).Int("r", R).Int("t", T).Int("window", w).Msg("window from the model")
	}
	st := o.Stage("predict")
	maps.Copy(st.Options, map[string]any{"window": o.Window, "queries": o.Queries, "method": o.Method, "alpha": o.Alpha,
		"idle_threshold": o.IdleThreshold, "regime_misses": o.RegimeMisses, "trace": predict.TraceID(name)})
	spec := pipelines.Spec{Name: "predict", Sources: []pipelines.Node{t.Source()}, Stages: []pipelines.Node{st}, Sinks: []pipelines.Node{collect("results", "predict")}}
	for _, rec := range []string{"windows", "predictions", "verdicts", "alerts"} {
		if outDir != "" {
			spec.Sinks = append(spec.Sinks, pipelines.Node{ID: rec, Type: format, Inputs: []string{"predict"},
				Options: map[string]any{"path": filepath.Join(outDir, rec+"."+format), "records": rec}})
		}
	}
	res := &predict.Results{}
	if err := r.Run(ctx, spec, map[string]tracecast.Sink{"results": res}); err != nil {
		return nil, err
	}
	period, _ := strconv.ParseFloat(res.Meta["period"], 64)
	r.Log.Info().Int("windows", len(res.Windows)).Int("predictions", len(res.Predictions)).Int("verdicts", len(res.Verdicts)).
		Int("alerts", len(res.Alerts)).Float64("horizon_s", float64(o.Window)*period/tracecast.PerSecond(res.Meta["time_unit"])).Msg("prediction phase")
	if outDir == "" {
		return res, nil
	}
	return res, output.WriteFile(filepath.Join(outDir, "records.jsonl"), func(w io.Writer) error { return res.WriteJSONL(w, true) })
}
