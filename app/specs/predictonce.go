package specs

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	fc "github.com/tracecast/tracecast/forecast"
	"github.com/tracecast/tracecast/internal/output"
	stage "github.com/tracecast/tracecast/stages/forecast"
)

// spillMax bounds the JSON lines predict holds in a temporary file, by
// estimate, while it reads a trace once: beyond it (a forecast every
// millisecond of a long run: 1.3 GB of records for the 2.1 GB trace with
// horizons of 10 ms and 1 s) it reads the file twice and streams them.
var spillMax int64 = 128 << 20

// recordBytes is about what a forecast or outcome record takes as a JSON
// line (340–420 bytes on the StarPU traces).
const recordBytes = 400

// predictOnce runs the forecasts of o in one pass over the file: where o
// leaves neither R nor the horizons to the trace, straight; otherwise
// where R and the run's span are what the file's beginning and end say
// (guessSteps). The records go to a temporary place
// — a directory inside -o DIR, or a file in the temporary directory for
// standard output — while the pass measures R and the span
// (stage.StepsSink.FirstOnly, as the first pass would); if they are the
// guess's, the records are the two passes' and are moved where they
// belong (done). Otherwise they are dropped, and measured is what the
// second pass needs: the file is read once more, as before. done false
// and measured nil: no guess (the two passes, as before). A failure of
// the temporary output itself (a full temporary directory) also falls
// back to the two passes, which write where they were asked to.
func (r Runner) predictOnce(ctx context.Context, t Trace, o Forecasts, run *ForecastRun) (done bool, measured *fc.Steps, err error) {
	// direct: nothing is left to the trace (--workers and --horizon
	// given): the records go where asked, and the pass measures only
	// what withSteps warns about.
	direct := o.Workers != 0 && len(o.Horizons) != 0
	guessed := o
	if !direct {
		g := guessSteps(t, o.Rules, queryClass(o.Queries), o.Workers)
		if g == nil {
			return false, nil, nil
		}
		if o.Workers == 0 {
			guessed.Workers = g.R[0]
		}
		if len(o.Horizons) == 0 {
			guessed.Horizons = stage.DefaultHorizons(g.End - g.T[0])
		}
		if o.Out == "" && spillBytes(guessed, g.End-g.T[0]) > spillMax {
			return false, nil, nil
		}
	}
	dir, stdout, tmp := o.Out, "-", ""
	if !direct {
		parent := o.Out
		if parent == "" {
			parent = os.TempDir()
		}
		if tmp, err = os.MkdirTemp(parent, ".tracecast-predict-"); err != nil {
			return false, nil, nil
		}
		defer os.RemoveAll(tmp)
		dir, stdout = tmp, filepath.Join(tmp, "records.jsonl")
	}
	spec, sinks := forecastSpec(t, guessed, run, dir, stdout)
	steps := stage.NewStepsSink(o.Rules, queryClass(o.Queries), "", o.Workers).FirstOnly()
	spec.Sinks = append(spec.Sinks, collect("steps", "trace"))
	sinks["steps"] = steps
	if err := r.Run(ctx, spec, sinks); err != nil {
		if !direct && strings.Contains(err.Error(), tmp) {
			r.Log.Debug().Err(err).Msg("predict: the records' temporary place failed: reading the trace twice")
			run.Explained = stage.Explained{}
			return false, nil, nil
		}
		return false, nil, err
	}
	if measured, err = steps.Steps(); err != nil {
		return false, nil, fmt.Errorf("%s: %w", t.Path, err)
	}
	if (o.Workers == 0 && measured.R[0] != guessed.Workers) ||
		(len(o.Horizons) == 0 && !slices.Equal(stage.DefaultHorizons(measured.End-measured.T[0]), guessed.Horizons)) {
		r.Log.Debug().Msg("predict: R or the run's span was not what the file's beginning and end said: reading it again")
		run.Explained = stage.Explained{}
		return false, measured, nil
	}
	r.withSteps(o, measured) // its warning and note, as after a first pass
	switch {
	case direct:
		return true, nil, nil
	case o.Out == "":
		return true, nil, copyToStdout(stdout)
	}
	return true, nil, moveInto(tmp, o.Out)
}

// spillBytes estimates the JSON lines of forecasts and outcomes o writes
// over a run of span seconds.
func spillBytes(o Forecasts, span float64) int64 {
	every := 0.0
	if o.Every != "" {
		every, _ = stage.ParseDuration(o.Every)
	}
	hs := 0.0
	for _, h := range o.Horizons {
		if v, err := stage.ParseDuration(h); err == nil && (hs == 0 || v < hs) {
			hs = v
		}
	}
	if every <= 0 {
		every = hs / 10
	}
	queries := len(o.Queries)
	if queries == 0 {
		queries = len(stage.DefaultStageConfig().Queries)
	}
	if !(every > 0) || !(span >= 0) {
		return 1 << 62
	}
	return int64(min(span/every+1, 1<<40)) * int64(len(o.Horizons)*queries*2*recordBytes)
}

// copyToStdout writes the spilled records to standard output, as the
// JSON-lines sink would have (its errors name "stdout").
func copyToStdout(path string) error {
	in, err := os.Open(path)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := output.Open("-", output.Options{})
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Abort()
		return err
	}
	return out.Commit()
}
