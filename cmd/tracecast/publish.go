package main

import (
	"errors"

	"github.com/spf13/cobra"
	"github.com/tracecast/tracecast/ingest/file"
	kafkaingest "github.com/tracecast/tracecast/ingest/kafka"
	"github.com/tracecast/tracecast/live"
)

func newPublishCmd() *cobra.Command {
	var o live.PublishOptions
	var kafka *live.Kafka
	cmd := &cobra.Command{
		Use:   "publish TRACE --topic T [--speed realtime|Nx|max] [--brokers ADDR]",
		Short: "Replay an archived trace into a Kafka topic, as a live run would produce it",
		Long: `publish reads a trace file (plain or gzip) and writes its lines to a Kafka
topic, keyed by the trace id (--trace, default the file name) so that the
trace's lines stay in one partition and in order: --lines-per-message lines
per message, numbered by a tracecast-seq header (0 starts the trace), then an
empty end marker (header tracecast-end: 1) unless --no-end. The header comes
first, as a live producer must send it; the kafka source never commits past
the start of an unfinished trace, so a consumer that takes the partition
over later still finds it. The format is documented in package ingest/kafka.

--speed paces the replay by trace time (realtime, 10x, max); --time-unit
gives the trace's unit for pacing (auto: ms for StarPU, s otherwise).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := file.ParseSpeed(o.Speed); err != nil {
				return usageErr(err)
			}
			if o.Topic == "" {
				return usageErr(errors.New("--topic is required"))
			}
			o.Logger = log
			var err error
			if o.Brokers, o.TLS, o.SASL, err = kafka.Connect(); err != nil {
				return optionErr(err)
			}
			_, err = live.Publish(cmd.Context(), args[0], o)
			return optionErr(err)
		},
	}
	f := cmd.Flags()
	kafka = live.AddKafkaFlags(f, "Kafka brokers", "127.0.0.1:9092")
	f.StringVar(&o.Topic, "topic", "", "topic to write the trace's lines to")
	f.StringVar(&o.Speed, "speed", "max", "pace: max, realtime or Nx (10x, 0.5x), by trace time")
	f.StringVar(&o.Trace, "trace", "", "trace id, the messages' key (default: the file name)")
	f.StringVar(&o.TimeUnit, "time-unit", "auto", "the trace's time unit for pacing: auto, s, ms, us, ns")
	f.IntVar(&o.LinesPerMessage, "lines-per-message", kafkaingest.DefaultLinesPerMessage, "lines packed in one message (1: a message per line)")
	f.BoolVar(&o.NoEnd, "no-end", false, "do not send the end-of-trace marker (the trace stays open, as if its run went on)")
	return cmd
}
