package pipelines

import (
	"context"
	"io"
	"os"

	"github.com/rs/zerolog"

	"github.com/tracecast/tracecast/pipelines/component"
	"github.com/tracecast/tracecast/pipelines/progress"
)

// Interactive are the options of a pipeline run by a person or a service
// manager (tracecast run, live, demo).
type Interactive struct {
	// Registry resolves component types (RunOptions.Registry).
	Registry *component.Registry
	Logger   zerolog.Logger
	// Bar shows a progress bar (bytes, rate, ETA) on standard error when it
	// is a terminal, with the logs written above it by a logger NewLogger
	// makes.
	Bar       bool
	NewLogger func(io.Writer) zerolog.Logger
	// Metrics and Health, when not nil, get the pipeline's metrics and
	// say whether it runs (RunOptions).
	Metrics MetricsRegistry
	Health  *Health
}

// RunInteractive runs cfg until its input ends or it is stopped: the first
// SIGINT or SIGTERM stops it gracefully, a second one at once.
func RunInteractive(ctx context.Context, cfg *Config, o Interactive) error {
	ctx, hard, stop := WithSignals(ctx, o.Logger)
	defer stop()
	opts := RunOptions{Registry: o.Registry, Logger: o.Logger, HardStop: hard}
	opts.Metrics, opts.Health = o.Metrics, o.Health
	if o.Bar && progress.IsTerminal(os.Stderr) {
		b := progress.NewBar(os.Stderr)
		opts.Progress = b.Update
		defer b.Finish()
		opts.Logger = o.NewLogger(b.Wrap(os.Stderr)) // logs print above the bar
	}
	return Run(ctx, cfg, opts)
}
