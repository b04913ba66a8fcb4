package specs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/tracecast/tracecast/internal/output"
	"github.com/tracecast/tracecast/pipelines"
	"github.com/tracecast/tracecast/pipelines/builtin"
	"github.com/tracecast/tracecast/report"
)

// LoadPipeline reads a pipeline file, or a built-in pipeline by name,
// applies the overrides (ID.KEY=VALUE, as --set gives them; the demo trace
// built into the binary stands in for the repository's copy when that is
// not here) and checks the result. A name that is neither a file nor a
// built-in pipeline and a bad override are *OptionError.
func LoadPipeline(arg string, sets []string) (*pipelines.Config, error) {
	cfg, err := pipelines.LoadNamed(arg)
	if errors.Is(err, pipelines.ErrNoPipeline) {
		return nil, &OptionError{[]string{err.Error()}}
	} else if err != nil {
		return nil, err
	}
	for _, s := range sets {
		if err := cfg.Override(s); err != nil {
			return nil, &OptionError{[]string{"--set " + err.Error()}}
		}
	}
	if err := pipelines.UseDemoTrace(cfg); err != nil {
		return nil, err
	}
	return cfg, pipelines.Check(builtin.Registry(), cfg)
}

// RunConfig runs a pipeline as a command does: the first SIGINT or SIGTERM
// stops it gracefully, a second at once; with bar, a progress bar on a
// terminal; metrics when m is not nil.
func (r Runner) RunConfig(ctx context.Context, cfg *pipelines.Config, bar bool, m *pipelines.Metrics) error {
	return pipelines.RunInteractive(ctx, cfg, pipelines.Interactive{Logger: r.Log, Bar: bar, Metrics: m, NewLogger: r.NewLogger})
}

// Demo writes the StarPU trace built into the binary to dir, runs the
// built-in pipelines replay-starpu and idle-starpu on it (their outputs in
// dir/NAME/) and the HTML report (dir/report.html, with the run's power
// stream built into the binary), and prints to w a
// summary and the files written.
func (r Runner) Demo(ctx context.Context, dir string, bar bool, w io.Writer) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	trace := filepath.Join(dir, "starpu-cholesky-2cpu.trace.gz")
	if err := writeBytes(trace, pipelines.DemoTrace()); err != nil {
		return err
	}
	start := time.Now()
	replay, err := r.runBuiltin(ctx, "replay-starpu", trace, dir, bar)
	if err != nil {
		return err
	}
	took := time.Since(start)
	idle, err := r.runBuiltin(ctx, "idle-starpu", trace, dir, false)
	if err != nil {
		return err
	}
	if err := report.WriteDemoFiles(w, replay["records"], idle["records"], took, replay, idle); err != nil {
		return err
	}
	// The page to look at: Gantt chart, occupancy, forecasts, and energy
	// from the run's power stream.
	power := ReportPower{Powers: []string{filepath.Join(dir, pipelines.DemoPowerName)}, Attribution: DefaultAttribution()}
	if err := writeBytes(power.Powers[0], pipelines.DemoPower()); err != nil {
		return err
	}
	page := filepath.Join(dir, "report.html")
	if err := r.WriteReport(ctx, Trace{Path: trace}, "auto", nil, power, page); err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "  %-12s %s (open it in a browser)\n", "report", page)
	return err
}

// runBuiltin runs a built-in pipeline on trace with its outputs in
// dir/NAME/, and returns the output paths by sink id.
func (r Runner) runBuiltin(ctx context.Context, name, trace, dir string, bar bool) (map[string]string, error) {
	cfg, err := LoadPipeline(name, []string{"trace.path=" + trace})
	if err != nil {
		return nil, err
	}
	outputs := cfg.MoveOutputs(filepath.Join(dir, name))
	if err := pipelines.Check(builtin.Registry(), cfg); err != nil {
		return nil, err
	}
	return outputs, r.RunConfig(ctx, cfg, bar, nil)
}

// writeBytes writes b to path, complete or not at all (internal/output).
func writeBytes(path string, b []byte) error {
	return output.WriteFile(path, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}
