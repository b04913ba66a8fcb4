package main

import (
	"context"
	"fmt"
	"time"

	kafkago "github.com/segmentio/kafka-go"
	"github.com/spf13/cobra"
	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/ingest/file"
	kafkaingest "github.com/tracecast/tracecast/ingest/kafka"
	"github.com/tracecast/tracecast/parsers/paje"
	"github.com/tracecast/tracecast/stages/predict"
)

func newPublishCmd() *cobra.Command {
	var brokers []string
	var topic, speed, trace, unit string
	var perMessage int
	var noEnd bool
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
over later still finds it. The format is documented in package ingest/kafka. --speed paces the
replay by trace time (realtime, 10x, max); --time-unit gives the trace's
unit for pacing (auto: ms for StarPU, s otherwise).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sp, err := file.ParseSpeed(speed)
			if err != nil {
				return usageErr(err)
			}
			if topic == "" {
				return usageErr(fmt.Errorf("--topic is required"))
			}
			if trace == "" {
				trace = predict.TraceID(args[0])
			}
			o := file.Options{Path: args[0], Speed: sp, Logger: log}
			if sp != file.SpeedMax {
				lt := &paje.LineTimer{}
				if unit != "auto" {
					if _, ok := tracecast.UnitsPerSecond(unit); !ok {
						return usageErr(fmt.Errorf("--time-unit %q: auto, s, ms, us or ns", unit))
					}
					lt.SetUnit(unit)
				}
				o.TimeOf, o.TimeScale = lt.Seconds, 1
			}
			src, err := file.New(o)
			if err != nil {
				return err
			}
			tr := &kafkago.Transport{}
			defer tr.CloseIdleConnections()
			w := &kafkago.Writer{Addr: kafkago.TCP(brokers...), Topic: topic, Balancer: &kafkago.Hash{},
				RequiredAcks: kafkago.RequireAll, BatchTimeout: 5 * time.Millisecond, Transport: tr}
			defer w.Close()
			ctx := cmd.Context()
			var n int64
			start := time.Now()
			p := &kafkaingest.Producer{W: w, Trace: trace, LinesPerMessage: perMessage}
			err = src.Run(ctx, func(ctx context.Context, b tracecast.Batch) error {
				return p.Lines(ctx, b.Items.([]tracecast.Line))
			})
			if err != nil {
				return err
			}
			n = p.Sent()
			if !noEnd {
				if err := p.End(ctx); err != nil {
					return err
				}
			}
			log.Info().Str("topic", topic).Str("trace", trace).Int64("lines", n).
				Float64("lines_per_s", float64(n)/time.Since(start).Seconds()).Msg("published")
			return nil
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&brokers, "brokers", []string{"127.0.0.1:9092"}, "Kafka brokers")
	f.StringVar(&topic, "topic", "", "topic to write the trace's lines to")
	f.StringVar(&speed, "speed", "max", "pace: max, realtime or Nx (10x, 0.5x), by trace time")
	f.StringVar(&trace, "trace", "", "trace id, the messages' key (default: the file name)")
	f.StringVar(&unit, "time-unit", "auto", "the trace's time unit for pacing: auto, s, ms, us, ns")
	f.IntVar(&perMessage, "lines-per-message", kafkaingest.DefaultLinesPerMessage, "lines packed in one message (1: a message per line)")
	f.BoolVar(&noEnd, "no-end", false, "do not send the end-of-trace marker (the trace stays open, as if its run went on)")
	return cmd
}
