package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tracecast/tracecast/live"
)

func newLiveCmd() *cobra.Command {
	var addr, dataDir, tracePath, speed, metricsAddr string
	var sets []string
	var kafka *live.Kafka
	var demo, noProgress bool
	cmd := &cobra.Command{
		Use:   "live [--demo | --trace PATH] [--addr 127.0.0.1:9092 | --brokers ADDR,...]",
		Short: "Run the live setup in one process: broker, live pipeline and, with --demo, a run replayed in real time",
		Long: `live starts what a scheduler needs to subscribe to idle-likelihood
predictions of runs in progress, in one process:

  - a Kafka-protocol broker on --addr (as 'tracecast broker', with the topics
    ` + live.Topics + `), unless --brokers names existing ones;
  - the live pipeline: with --trace, live-tail (follow that trace file while
    the run writes it); otherwise live-kafka (read the lines of every run
    published to tracecast.traces, e.g. by 'tracecast publish');
  - with --demo, the StarPU trace built into the binary published to
    tracecast.traces at --speed, as if the run were happening now.

Forecasts over 10 ms, 100 ms and 1 s (with their outcomes) go to
tracecast.forecasts, seed 004's predictions to tracecast.predictions (with
their verdicts) and alerts to tracecast.alerts; watch them from another terminal with
'tracecast subscribe --topic tracecast.predictions'. --set overrides
pipeline options as in 'tracecast run'. Ctrl-C stops gracefully.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if demo && tracePath != "" {
				return usageErr(fmt.Errorf("--demo and --trace: choose one (--demo replays the built-in trace through Kafka)"))
			}
			name := "live-kafka"
			if tracePath != "" {
				name = "live-tail"
			}
			cfg, err := loadPipeline(name, sets)
			if err != nil {
				return err
			}
			if err := kafka.Resolve(); err != nil {
				return optionErr(err)
			}
			if len(kafka.Brokers) == 0 {
				if kafka.Secure() {
					return usageErr(fmt.Errorf("--tls and --sasl-* need --brokers: the broker live starts has neither"))
				}
				c, err := live.StartBroker(live.BrokerOptions{Addr: addr, DataDir: dataDir, Topics: []string{live.Topics}, Partitions: 4, MinSessionTimeout: time.Second})
				if err != nil {
					return optionErr(err)
				}
				defer c.Close()
				kafka.Brokers = c.ListenAddrs()
				fmt.Printf("READY broker %s\n", strings.Join(kafka.Brokers, ","))
			}
			for _, c := range cfg.Components() {
				if c.Type == "tail" {
					c.SetOption("path", tracePath)
				}
			}
			if err := optionErr(kafka.Apply(cfg)); err != nil {
				return err
			}
			ctx, cancel := context.WithCancel(cmd.Context())
			defer cancel()
			if demo {
				o := live.PublishOptions{Topic: "tracecast.traces", Speed: speed, Logger: log}
				if o.Brokers, o.TLS, o.SASL, err = kafka.Connect(); err != nil {
					return optionErr(err)
				}
				go func() {
					if err := live.PublishDemo(ctx, o); err != nil && ctx.Err() == nil {
						log.Error().Err(err).Msg("publishing the demo run")
					}
				}()
			}
			return runPipeline(ctx, cfg, !noProgress, metricsAddr)
		},
	}
	f := cmd.Flags()
	f.StringVar(&addr, "addr", "127.0.0.1:9092", "where the broker listens (loopback only)")
	f.StringVar(&dataDir, "data-dir", "", "persist the broker's topics and offsets in DIR")
	kafka = live.AddKafkaFlags(f, "use these Kafka brokers instead of starting one")
	f.StringVar(&tracePath, "trace", "", "follow this trace file (live-tail) instead of reading traces from Kafka")
	f.BoolVar(&demo, "demo", false, "publish the built-in StarPU trace to tracecast.traces, paced by --speed")
	f.StringVar(&speed, "speed", "realtime", "pace of the --demo run: realtime, Nx or max")
	f.StringArrayVar(&sets, "set", nil, "override a pipeline option: ID.KEY=VALUE (repeatable)")
	f.BoolVar(&noProgress, "no-progress", false, "no progress bar, even on a terminal")
	f.StringVar(&metricsAddr, "metrics-addr", "", metricsHelp)
	return cmd
}
