package specs

import (
	"context"
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tracecast/tracecast/internal/cliflags"
	"github.com/tracecast/tracecast/internal/promexport"
	"github.com/tracecast/tracecast/live"
	"github.com/tracecast/tracecast/pipelines"
)

// Metrics is --metrics-addr, of the commands that serve metrics.
type Metrics struct {
	Addr string `flag:"metrics-addr" help:"serve Prometheus metrics on http://ADDR/metrics, and /healthz, /readyz (a loopback address: 127.0.0.1:9464)"`
}

// MetricsServer is a metrics server started by Start: a registry with the
// Go and process metrics, for a pipeline's own, and the health it reports.
type MetricsServer struct {
	Registry *prometheus.Registry
	Health   *pipelines.Health
	stop     func()
}

// Stop stops the server.
func (m *MetricsServer) Stop() {
	if m != nil {
		m.stop()
	}
}

// SetReady says whether the service runs, for a service without a pipeline
// (the broker): /readyz.
func (m *MetricsServer) SetReady(v bool) {
	if m != nil {
		m.Health.Set(v)
	}
}

// Start serves metrics on m.Addr (none, nil, when it is ""); a bad address
// is a usage error. Stop the result (nil too) when done.
func (r Runner) Start(m Metrics) (*MetricsServer, error) {
	if m.Addr == "" {
		return nil, nil
	}
	ms := &MetricsServer{Registry: promexport.NewRegistry(), Health: &pipelines.Health{}}
	var err error
	if _, ms.stop, err = promexport.Serve(m.Addr, ms.Registry, ms.Health, r.Log); err != nil {
		return nil, cliflags.Usage(err)
	}
	return ms, nil
}

// RunMetrics runs cfg as RunConfig does, with metrics served as m says.
func (r Runner) RunMetrics(ctx context.Context, cfg *pipelines.Config, bar bool, m Metrics) error {
	ms, err := r.Start(m)
	if err != nil {
		return err
	}
	defer ms.Stop()
	return r.RunConfig(ctx, cfg, bar, ms)
}

// FlagError makes a bad option of package live a usage error naming its
// flag (--addr "x": reason); other errors are returned as they are.
func FlagError(err error) error {
	var oe *live.OptionError
	if errors.As(err, &oe) {
		return cliflags.Usage(fmt.Errorf("--%w", oe))
	}
	return err
}

// RunFile is the run command: a pipeline file, or a built-in pipeline by
// name, with what its command line overrides.
type RunFile struct {
	Metrics
	MemLimit   string   `flag:"memory-limit" help:"soft memory limit while the pipeline runs (512MiB, 2GiB, off; default: settings.memory_limit; GOMEMLIMIT also works)"`
	Speed      string   `flag:"speed" help:"replay pace of every file source: max, realtime or Nx (10x, 0.5x), by trace time"`
	Sets       []string `flag:"set" help:"override an option: ID.KEY=VALUE (repeatable)"`
	NoProgress bool     `flag:"no-progress" help:"no progress bar, even on a terminal"`
	// Kafka, when its brokers are given, points every kafka source and
	// sink at them.
	Kafka *live.Kafka
}

// RunFile loads the pipeline arg, applies o and runs it until its input
// ends or a signal stops it.
func (r Runner) RunFile(ctx context.Context, arg string, o RunFile) error {
	cfg, err := LoadPipeline(arg, o.Sets)
	if err != nil {
		return err
	}
	if err := FlagError(o.Kafka.Apply(cfg)); err != nil {
		return err
	}
	if err := SetRunOptions(cfg, o.MemLimit, o.Speed); err != nil {
		return err
	}
	return r.RunMetrics(ctx, cfg, !o.NoProgress, o.Metrics)
}

// Live is the live command: live.Serve with the live-tail pipeline when a
// trace file is given, else live-kafka.
type Live struct {
	live.ServeOptions
	Metrics
	Sets       []string `flag:"set" help:"override a pipeline option: ID.KEY=VALUE (repeatable)"`
	NoProgress bool     `flag:"no-progress" help:"no progress bar, even on a terminal"`
}

// Live serves o until ctx ends; a bad option is a usage error.
func (r Runner) Live(ctx context.Context, o Live) error {
	name := "live-kafka"
	if o.Trace != "" {
		name = "live-tail"
	}
	cfg, err := LoadPipeline(name, o.Sets)
	if err != nil {
		return err
	}
	m, err := r.Start(o.Metrics)
	if err != nil {
		return err
	}
	defer m.Stop()
	if m != nil {
		o.ServeOptions.Metrics = m.Registry // the broker's, when live starts one
	}
	o.Logger = r.Log
	return FlagError(live.Serve(ctx, cfg, o.ServeOptions, func(ctx context.Context, cfg *pipelines.Config) error {
		return r.RunConfig(ctx, cfg, !o.NoProgress, m)
	}))
}
