package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/tracecast/tracecast/app/specs"
	kafkaingest "github.com/tracecast/tracecast/ingest/kafka"
	"github.com/tracecast/tracecast/internal/cliflags"
	"github.com/tracecast/tracecast/live"
	"github.com/tracecast/tracecast/pipelines"
)

func newLiveCmd() *cobra.Command {
	o := specs.Live{ServeOptions: live.ServeOptions{Addr: "127.0.0.1:9092", Speed: "realtime", Ready: os.Stdout}}
	cmd := &cobra.Command{
		Use:   "live [--demo | --trace PATH] [--addr 127.0.0.1:9092 | --brokers ADDR,...]",
		Short: "Run the live setup in one process: broker, live pipeline and, with --demo, a run replayed in real time",
		Long: `live runs, in one process, what a scheduler subscribes to: a Kafka-protocol
broker on --addr (unless --brokers names existing ones), the live pipeline
— following the trace file --trace while the run writes it, or reading the
traces published to tracecast.traces ('tracecast publish') — and with
--demo the trace built into the binary published as if it ran now.
Forecasts over 10 ms, 100 ms and 1 s go to tracecast.forecasts, window
predictions to tracecast.predictions, alerts to tracecast.alerts: watch
them with 'tracecast subscribe'. --set overrides pipeline options as in
'tracecast run'. Ctrl-C stops gracefully.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runner().Live(cmd.Context(), o) },
	}
	cliflags.Bind(cmd.Flags(), &o)
	o.Kafka = live.AddKafkaFlags(cmd.Flags(), "use these Kafka brokers instead of starting one")
	return cmd
}

func newBrokerCmd() *cobra.Command {
	o := live.BrokerOptions{Addr: "127.0.0.1:9092", Partitions: 4, MinSessionTimeout: time.Second}
	var metrics specs.Metrics
	cmd := &cobra.Command{
		Use:   "broker [--addr 127.0.0.1:9092] [--data-dir DIR] [--topics NAME[:PARTITIONS],...]",
		Short: "Run a Kafka-protocol broker for development, tests, CI and the demo",
		Long: `broker runs a Kafka-protocol broker (franz-go's kfake, in Go: no Java, no
Docker) on a loopback address, for development, tests and demos — not
production. --topics creates topics at start; --data-dir keeps topics,
messages and offsets across restarts. It prints "READY ADDR" when it
accepts connections and stops on SIGINT/SIGTERM.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := runner().Start(metrics)
			if err != nil {
				return err
			}
			defer m.Stop()
			if m != nil {
				o.Metrics = m.Registry
			}
			return specs.FlagError(live.ServeBroker(cmd.Context(), o, log, func(addrs []string) {
				m.SetReady(true)
				fmt.Printf("READY %s\n", strings.Join(addrs, ","))
			}))
		},
	}
	f := cmd.Flags()
	cliflags.Bind(f, &o)
	cliflags.Bind(f, &metrics)
	return cmd
}

func newPublishCmd() *cobra.Command {
	o := live.PublishOptions{Speed: "max", TimeUnit: "auto", LinesPerMessage: kafkaingest.DefaultLinesPerMessage, DeliveryTimeout: 2 * time.Minute}
	var kafka *live.Kafka
	cmd := &cobra.Command{
		Use:   "publish TRACE --topic T [--speed realtime|Nx|max] [--brokers ADDR]",
		Short: "Replay an archived trace into a Kafka topic, as a live run would produce it",
		Long: `publish writes the lines of a trace file (plain or gzip) to a Kafka topic as
a running application would: keyed by the trace id (--trace, default the
file name), numbered by a tracecast-seq header, then an end marker (unless
--no-end). --speed paces them by trace time (realtime, 10x, max). The
message format: package ingest/kafka.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Logger = log
			if o.DeliveryTimeout <= 0 { // never "the default"
				return cliflags.Usage(fmt.Errorf("--delivery-timeout %v: must be positive", o.DeliveryTimeout))
			}
			var err error
			if o.Brokers, o.TLS, o.SASL, err = kafka.Connect(); err != nil {
				return specs.FlagError(err)
			}
			ctx, stop := withSignals(cmd.Context())
			defer stop()
			_, err = live.Publish(ctx, args[0], o)
			return specs.FlagError(err)
		},
	}
	f := cmd.Flags()
	cliflags.Bind(f, &o)
	kafka = live.AddKafkaFlags(f, "Kafka brokers", "127.0.0.1:9092")
	return cmd
}

func newTopicsCmd() *cobra.Command {
	o := live.TopicsOptions{Partitions: 4, ReplicationFactor: 1}
	var kafka *live.Kafka
	cmd := &cobra.Command{
		Use:   "topics [list | create [NAME[:PARTITIONS]]...] [--brokers ADDR]",
		Short: "List, or create, the live setup's topics on any Kafka cluster",
		Long: `topics lists the topics of a Kafka cluster (the live setup's marked, and
those it lacks), or, with create, creates topics: by default the live
setup's (` + live.Topics + `),
else NAME or NAME:PARTITIONS. A topic that exists already is left as it is.
Kafka brokers and 'tracecast broker' create a topic on first use unless
told not to (auto.create.topics.enable=false, --no-auto-create-topics):
create them first on such a cluster, with the partitions and replication
you want (--replication-factor 3 on a production cluster).`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			if o.Brokers, o.TLS, o.SASL, err = kafka.Connect(); err != nil {
				return specs.FlagError(err)
			}
			return specs.FlagError(live.TopicsCommand(cmd.Context(), o, args, os.Stdout))
		},
	}
	f := cmd.Flags()
	cliflags.Bind(f, &o)
	kafka = live.AddKafkaFlags(f, "Kafka brokers", "127.0.0.1:9092")
	return cmd
}

func newSubscribeCmd() *cobra.Command {
	o := live.SubscribeOptions{Topic: "tracecast.predictions"}
	var kafka *live.Kafka
	cmd := &cobra.Command{
		Use:   "subscribe [--topic tracecast.predictions] [--query Q] [--brokers ADDR]",
		Short: "Show what a scheduler receives: predictions, verdicts and alerts from Kafka",
		Long: `subscribe prints the records tracecast publishes on a Kafka topic as JSON
lines — what a scheduler receives. Each has "schema" and a deterministic
"id" (de-duplicate on it); one trace's records arrive in order. --query and
--kind filter; with --group the subscriber joins a consumer group and
commits what it printed. examples/scheduler is the same loop in Go.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Logger = log
			var err error
			if o.Brokers, o.TLS, o.SASL, err = kafka.Connect(); err != nil {
				return specs.FlagError(err)
			}
			ctx, stop := withSignals(cmd.Context())
			defer stop()
			return live.SubscribeLines(ctx, o, os.Stdout)
		},
	}
	f := cmd.Flags()
	cliflags.Bind(f, &o)
	kafka = live.AddKafkaFlags(f, "Kafka brokers", "127.0.0.1:9092")
	return cmd
}

// withSignals gives publish and subscribe the stops of a pipeline
// (pipelines.WithSignals): SIGINT or SIGTERM stops them cleanly (publish
// finishes the message being sent, subscribe commits what it printed; exit
// 0), a repeated SIGTERM too; a second SIGINT stops at once (exit 1).
func withSignals(parent context.Context) (context.Context, func()) {
	ctx, hard, stop := pipelines.WithSignals(parent, log)
	done := make(chan struct{})
	go func() {
		select {
		case <-hard:
			fmt.Fprintln(os.Stderr, "tracecast: stopped at once on request")
			os.Exit(1)
		case <-done:
		}
	}()
	return ctx, func() { close(done); stop() }
}
