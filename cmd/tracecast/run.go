package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/tracecast/tracecast/live"
	"github.com/tracecast/tracecast/pipelines"
	"github.com/tracecast/tracecast/pipelines/builtin"
	"github.com/tracecast/tracecast/pipelines/progress"
)

func newRunCmd() *cobra.Command {
	var sets []string
	var noProgress bool
	var speed, metricsAddr string
	var kafka *live.Kafka
	cmd := &cobra.Command{
		Use:   "run [flags] PIPELINE",
		Short: "Run a pipeline declared in YAML",
		Long: `run loads a pipeline file (or the name of a pipeline built into the binary:
` + strings.Join(pipelines.Shipped(), ", ") + `), checks it strictly and runs it until its
input ends or it is stopped.

The first SIGINT/SIGTERM stops gracefully: sources stop, stages flush, sinks
write their footers. A second one, or the pipeline's shutdown_timeout, stops
at once. On a terminal a progress bar shows bytes read, rate and ETA;
otherwise a status line is logged every status_interval.

--speed replays file sources paced by trace time (realtime, 10x, 0.5x) as
if the run were happening now; max (the default) reads as fast as possible.

--set overrides a component option: --set trace.path=run.trace.gz
--set trace.speed=10x --set archive.path=out/run.arrow. A parser option is
set through its source: --set trace.parser.lenient=true.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := loadPipeline(args[0], sets)
			if err != nil {
				return err
			}
			if err := optionErr(kafka.Apply(cfg)); err != nil {
				return err
			}
			if speed != "" {
				for _, c := range cfg.Sources {
					if c.Type == "file" {
						c.SetOption("speed", speed)
					}
				}
				if err := pipelines.Check(builtin.Registry(), cfg); err != nil {
					return err
				}
			}
			return runPipeline(cmd.Context(), cfg, !noProgress, metricsAddr)
		},
	}
	cmd.Flags().StringVar(&metricsAddr, "metrics-addr", "", metricsHelp)
	kafka = live.AddKafkaFlags(cmd.Flags(), "point every kafka source and sink of the pipeline at these brokers")
	cmd.Flags().StringVar(&speed, "speed", "", "replay pace of every file source: max, realtime or Nx (10x, 0.5x), by trace time")
	cmd.Flags().StringArrayVar(&sets, "set", nil, "override an option: ID.KEY=VALUE (repeatable)")
	cmd.Flags().BoolVar(&noProgress, "no-progress", false, "no progress bar, even on a terminal")
	return cmd
}

func newValidateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "validate PIPELINE...",
		Short: "Check pipeline files without running them",
		Long: `validate decodes each pipeline file strictly (unknown keys are errors that
name the key and its line), checks the graph (inputs exist, no cycles) and
every component's options. Exit code 78 when a file is invalid.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, a := range args {
				cfg, err := loadPipeline(a, nil)
				if err != nil {
					return err
				}
				for _, w := range cfg.Warnings {
					fmt.Fprintf(os.Stderr, "%s: warning: %s\n", a, w)
				}
				fmt.Fprintf(os.Stdout, "%s: ok (%d sources, %d stages, %d sinks)\n", a, len(cfg.Sources), len(cfg.Stages), len(cfg.Sinks))
			}
			return nil
		},
	}
}

// loadPipeline reads a pipeline file, or a built-in pipeline by name, applies
// the --set overrides and validates the result.
func loadPipeline(arg string, sets []string) (*pipelines.Config, error) {
	cfg, err := pipelines.LoadNamed(arg)
	if errors.Is(err, pipelines.ErrNoPipeline) {
		return nil, usageErr(err)
	} else if err != nil {
		return nil, err
	}
	for _, s := range sets {
		if err := cfg.Override(s); err != nil {
			return nil, usageErr(fmt.Errorf("--set %w", err))
		}
	}
	if err := pipelines.Check(builtin.Registry(), cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}

// metricsHelp documents --metrics-addr.
const metricsHelp = "serve Prometheus metrics on http://ADDR/metrics, and /healthz, /readyz (a loopback address: 127.0.0.1:9464)"

// serveMetrics starts the metrics server on addr ("" : none) with Go and
// process metrics, and returns the registry for the pipeline's, the health
// to report, and a stop function.
func serveMetrics(addr string) (*prometheus.Registry, *pipelines.Health, func(), error) {
	if addr == "" {
		return nil, nil, func() {}, nil
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	h := &pipelines.Health{}
	_, stop, err := pipelines.ServeMetrics(addr, reg, h, log)
	if err != nil {
		return nil, nil, nil, usageErr(err)
	}
	return reg, h, stop, nil
}

// runPipeline runs cfg with signal handling, on a terminal a progress bar,
// and metrics on metricsAddr when given.
func runPipeline(parent context.Context, cfg *pipelines.Config, bar bool, metricsAddr string) error {
	reg, health, stopMetrics, err := serveMetrics(metricsAddr)
	if err != nil {
		return err
	}
	defer stopMetrics()
	ctx, hard, stop := pipelines.WithSignals(parent, log)
	defer stop()
	opts := pipelines.RunOptions{Logger: log, HardStop: hard, Health: health}
	if reg != nil {
		opts.Metrics = reg
	}
	if bar && progress.IsTerminal(os.Stderr) {
		b := progress.NewBar(os.Stderr)
		opts.Progress = b.Update
		defer b.Finish()
		opts.Logger = newLogger(b.Wrap(os.Stderr)) // logs print above the bar
	}
	return pipelines.Run(ctx, cfg, opts)
}
