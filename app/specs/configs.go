package specs

import (
	"context"
	"errors"
	"io"
	"path/filepath"

	"github.com/tracecast/tracecast/app/builtin"
	"github.com/tracecast/tracecast/internal/memlimit"
	"github.com/tracecast/tracecast/internal/output"
	"github.com/tracecast/tracecast/internal/promexport"
	"github.com/tracecast/tracecast/pipelines"
)

// LoadPipeline reads a pipeline file, or a built-in pipeline by name,
// applies the overrides (ID.KEY=VALUE, as --set gives them; the demo trace
// built into the binary stands in for the repository's copy when that is
// not here) and checks the result. A name that is neither a file nor a
// built-in pipeline and a bad override are *OptionError.
func LoadPipeline(arg string, sets []string) (*pipelines.Config, error) {
	cfg, err := pipelines.LoadNamed(arg)
	if errors.Is(err, pipelines.ErrNoPipeline) {
		return nil, &OptionError{Msgs: []string{err.Error()}}
	} else if err != nil {
		return nil, err
	}
	for _, s := range sets {
		if err := cfg.Override(s); err != nil {
			return nil, &OptionError{Msgs: []string{"--set " + err.Error()}}
		}
	}
	if err := pipelines.UseDemoTrace(cfg); err != nil {
		return nil, err
	}
	return cfg, pipelines.Check(builtin.Registry(), cfg)
}

// SetRunOptions applies what `tracecast run` says on its command line to
// a loaded pipeline: a soft memory limit (settings.memory_limit; "" keeps
// the file's) and the replay pace of every file source ("" keeps theirs),
// then checks the pipeline again. A bad value is an *OptionError.
func SetRunOptions(cfg *pipelines.Config, memLimit, speed string) error {
	if memLimit != "" {
		if _, err := memlimit.Parse(memLimit); err != nil {
			return &OptionError{Msgs: []string{"--memory-limit: " + err.Error()}}
		}
		cfg.Settings.MemoryLimit = memLimit
	}
	if speed == "" {
		return nil
	}
	for _, c := range cfg.Sources {
		if c.Type == "file" {
			c.SetOption("speed", speed)
		}
	}
	return pipelines.Check(builtin.Registry(), cfg)
}

// RunConfig runs a pipeline as a command does: the first SIGINT or SIGTERM
// stops it gracefully, a second at once; with bar, a progress bar on a
// terminal; metrics when m is not nil.
func (r Runner) RunConfig(ctx context.Context, cfg *pipelines.Config, bar bool, m *MetricsServer) error {
	o := pipelines.Interactive{Registry: builtin.Registry(), Logger: r.Log, Bar: bar, NewLogger: r.NewLogger}
	if m != nil {
		o.Metrics, o.Health = promexport.Registry{Registerer: m.Registry}, m.Health
	}
	return pipelines.RunInteractive(ctx, cfg, o)
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
