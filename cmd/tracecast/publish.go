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

// publishOptions say how to replay a trace file into a topic.
type publishOptions struct {
	brokers    []string
	topic      string
	speed      string
	trace      string // id, default the file name
	unit       string // auto, s, ms, us, ns
	perMessage int
	noEnd      bool
}

// publishTrace replays the trace file at path into the topic, paced by
// trace time, and returns the number of lines sent.
func publishTrace(ctx context.Context, path string, po publishOptions) (int64, error) {
	sp, err := file.ParseSpeed(po.speed)
	if err != nil {
		return 0, usageErr(err)
	}
	if po.topic == "" {
		return 0, usageErr(fmt.Errorf("--topic is required"))
	}
	if po.trace == "" {
		po.trace = predict.TraceID(path)
	}
	o := file.Options{Path: path, Speed: sp, Logger: log}
	if sp != file.SpeedMax {
		lt := &paje.LineTimer{}
		if po.unit != "auto" && po.unit != "" {
			if _, ok := tracecast.UnitsPerSecond(po.unit); !ok {
				return 0, usageErr(fmt.Errorf("--time-unit %q: auto, s, ms, us or ns", po.unit))
			}
			lt.SetUnit(po.unit)
		}
		o.TimeOf, o.TimeScale = lt.Seconds, 1
	}
	src, err := file.New(o)
	if err != nil {
		return 0, err
	}
	tr := &kafkago.Transport{}
	defer tr.CloseIdleConnections()
	w := &kafkago.Writer{Addr: kafkago.TCP(po.brokers...), Topic: po.topic, Balancer: &kafkago.Hash{},
		RequiredAcks: kafkago.RequireAll, BatchTimeout: 5 * time.Millisecond, Transport: tr}
	defer w.Close()
	start := time.Now()
	p := &kafkaingest.Producer{W: w, Trace: po.trace, LinesPerMessage: po.perMessage}
	err = src.Run(ctx, func(ctx context.Context, b tracecast.Batch) error {
		return p.Lines(ctx, b.Items.([]tracecast.Line))
	})
	if err != nil {
		return p.Sent(), err
	}
	if !po.noEnd {
		if err := p.End(ctx); err != nil {
			return p.Sent(), err
		}
	}
	log.Info().Str("topic", po.topic).Str("trace", po.trace).Int64("lines", p.Sent()).
		Float64("lines_per_s", float64(p.Sent())/time.Since(start).Seconds()).Msg("published")
	return p.Sent(), nil
}

func newPublishCmd() *cobra.Command {
	po := publishOptions{}
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
			_, err := publishTrace(cmd.Context(), args[0], po)
			return err
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&po.brokers, "brokers", []string{"127.0.0.1:9092"}, "Kafka brokers")
	f.StringVar(&po.topic, "topic", "", "topic to write the trace's lines to")
	f.StringVar(&po.speed, "speed", "max", "pace: max, realtime or Nx (10x, 0.5x), by trace time")
	f.StringVar(&po.trace, "trace", "", "trace id, the messages' key (default: the file name)")
	f.StringVar(&po.unit, "time-unit", "auto", "the trace's time unit for pacing: auto, s, ms, us, ns")
	f.IntVar(&po.perMessage, "lines-per-message", kafkaingest.DefaultLinesPerMessage, "lines packed in one message (1: a message per line)")
	f.BoolVar(&po.noEnd, "no-end", false, "do not send the end-of-trace marker (the trace stays open, as if its run went on)")
	return cmd
}
