package pipelines

import (
	"context"
	"io"
	"os"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/rs/zerolog"

	"github.com/tracecast/tracecast/pipelines/component"
	"github.com/tracecast/tracecast/pipelines/progress"
)

// Metrics is a metrics server started by StartMetrics: a registry with the
// Go and process metrics, for a pipeline's own, and the health it reports.
type Metrics struct {
	Registry *prometheus.Registry
	Health   *Health
	stop     func()
}

// StartMetrics serves metrics on addr (see ServeMetrics); none when addr is
// empty (a nil *Metrics, which Stop accepts).
func StartMetrics(addr string, log zerolog.Logger) (*Metrics, error) {
	if addr == "" {
		return nil, nil
	}
	m := &Metrics{Registry: prometheus.NewRegistry(), Health: &Health{}}
	m.Registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	var err error
	if _, m.stop, err = ServeMetrics(addr, m.Registry, m.Health, log); err != nil {
		return nil, err
	}
	return m, nil
}

// Stop stops the server.
func (m *Metrics) Stop() {
	if m != nil {
		m.stop()
	}
}

// SetReady says whether the service runs, for a service without a pipeline
// (the broker): /readyz.
func (m *Metrics) SetReady(v bool) {
	if m != nil {
		m.Health.Set(v)
	}
}

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
	// Metrics, when not nil, gets the pipeline's metrics and health.
	Metrics *Metrics
}

// RunInteractive runs cfg until its input ends or it is stopped: the first
// SIGINT or SIGTERM stops it gracefully, a second one at once.
func RunInteractive(ctx context.Context, cfg *Config, o Interactive) error {
	ctx, hard, stop := WithSignals(ctx, o.Logger)
	defer stop()
	opts := RunOptions{Registry: o.Registry, Logger: o.Logger, HardStop: hard}
	if o.Metrics != nil {
		opts.Metrics, opts.Health = o.Metrics.Registry, o.Metrics.Health
	}
	if o.Bar && progress.IsTerminal(os.Stderr) {
		b := progress.NewBar(os.Stderr)
		opts.Progress = b.Update
		defer b.Finish()
		opts.Logger = o.NewLogger(b.Wrap(os.Stderr)) // logs print above the bar
	}
	return Run(ctx, cfg, opts)
}
