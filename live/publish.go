package live

import (
	"context"
	"crypto/tls"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/rs/zerolog"
	kafkago "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/sasl"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/ingest/file"
	kafkaingest "github.com/tracecast/tracecast/ingest/kafka"
	"github.com/tracecast/tracecast/internal/kafkaconn"
	"github.com/tracecast/tracecast/internal/kafkaname"
	"github.com/tracecast/tracecast/parsers/paje"
	"github.com/tracecast/tracecast/pipelines"
	"github.com/tracecast/tracecast/stages/predict"
)

// PublishOptions say how Publish replays a trace file into a topic.
type PublishOptions struct {
	Brokers []string
	// TLS (nil: plaintext) and SASL (nil: none) secure the connections.
	TLS   *tls.Config
	SASL  sasl.Mechanism
	Topic string `flag:"topic" help:"topic to write the trace's lines to"`
	// Speed paces the replay by trace time: max (default), realtime, Nx.
	Speed string `flag:"speed" help:"pace: max, realtime or Nx (10x, 0.5x), by trace time"`
	// Trace is the trace id, the messages' key; default the file's name.
	Trace string `flag:"trace" help:"trace id, the messages' key (default: the file name)"`
	// TimeUnit is the trace's unit for pacing: auto (default: ms for
	// StarPU, s otherwise), s, ms, us, ns.
	TimeUnit string `flag:"time-unit" help:"the trace's time unit for pacing: auto, s, ms, us, ns"`
	// LinesPerMessage defaults to ingest/kafka's DefaultLinesPerMessage.
	LinesPerMessage int `flag:"lines-per-message" help:"lines packed in one message (1: a message per line)"`
	// NoEnd leaves the trace open: no end-of-trace marker.
	NoEnd bool `flag:"no-end" help:"do not send the end-of-trace marker (the trace stays open, as if its run went on)"`
	// DeliveryTimeout bounds the time a message may take to be
	// acknowledged, retries included (Kafka producers'
	// delivery.timeout.ms; default 2 min): a broker down, unable to store
	// or without the topic for longer fails the publication.
	DeliveryTimeout time.Duration `flag:"delivery-timeout" help:"give up when a message is not acknowledged within this time, retries included (a broker down, a topic that does not exist, a full disk), as Kafka producers' delivery.timeout.ms"`
	// Logger receives the source's warnings and the summary line.
	Logger zerolog.Logger
}

// Publish replays the trace file at path (plain or gzip, "-" for standard
// input) into the topic as a live producer sends it (package ingest/kafka:
// numbered lines keyed by trace id, then an end marker), paced by trace
// time, and returns the number of lines sent. A bad option is an
// *OptionError; a broker that refuses the connection (wrong password,
// untrusted certificate) an error saying so.
func Publish(ctx context.Context, path string, o PublishOptions) (int64, error) {
	if o.Speed == "" {
		o.Speed = "max"
	}
	sp, err := file.ParseSpeed(o.Speed)
	if err != nil {
		return 0, &OptionError{Option: "speed", Value: o.Speed, Err: err}
	}
	if o.Topic == "" {
		return 0, &OptionError{Option: "topic", Err: errors.New("required")}
	}
	if err := kafkaname.Topic(o.Topic); err != nil {
		return 0, &OptionError{Option: "topic", Err: err}
	}
	if len(o.Brokers) == 0 {
		return 0, &OptionError{Option: "brokers", Err: errors.New("at least one")}
	}
	if o.DeliveryTimeout < 0 {
		return 0, &OptionError{Option: "delivery-timeout", Value: o.DeliveryTimeout.String(), Err: errors.New("must be positive")}
	} else if o.DeliveryTimeout == 0 {
		o.DeliveryTimeout = kafkaconn.DefaultDeliveryTimeout
	}
	if o.Trace == "" {
		o.Trace = predict.TraceID(path)
	}
	fo := file.Options{Path: path, Speed: sp, Logger: o.Logger}
	if sp != file.SpeedMax {
		lt := &paje.LineTimer{}
		if o.TimeUnit != "auto" && o.TimeUnit != "" {
			if _, ok := tracecast.UnitsPerSecond(o.TimeUnit); !ok {
				return 0, &OptionError{Option: "time-unit", Value: o.TimeUnit, Err: errors.New("auto, s, ms, us or ns")}
			}
			lt.SetUnit(o.TimeUnit)
		}
		fo.TimeOf, fo.TimeScale = lt.Seconds, 1
	}
	src, err := file.New(fo)
	if err != nil {
		return 0, err
	}
	client := kafkaconn.Client{TLS: o.TLS, SASL: o.SASL}
	if err := client.Check(ctx, o.Brokers); err != nil {
		return 0, err
	}
	tr := client.Transport()
	defer tr.CloseIdleConnections()
	// AllowAutoTopicCreation: a broker that creates topics on first use
	// (Kafka's default, tracecast broker's) creates it; one that does not
	// answers Unknown Topic Or Partition until the delivery timeout.
	w := &kafkago.Writer{Addr: kafkago.TCP(o.Brokers...), Topic: o.Topic, Balancer: &kafkago.Hash{},
		RequiredAcks: kafkago.RequireAll, BatchTimeout: 5 * time.Millisecond, Transport: tr, AllowAutoTopicCreation: true}
	defer w.Close()
	start := time.Now()
	p := &kafkaingest.Producer{W: w, Trace: o.Trace, LinesPerMessage: o.LinesPerMessage, Log: o.Logger,
		DeliveryTimeout: o.DeliveryTimeout, Brokers: o.Brokers}
	// A stop (ctx cancelled: SIGINT, SIGTERM) stops the source and the wait
	// for a broker that cannot be reached; the messages already handed to
	// the writer are sent by its Close.
	err = src.Run(ctx, func(_ context.Context, b tracecast.Batch) error {
		return p.Lines(ctx, b.Items.([]tracecast.Line))
	})
	ended := false
	if err == nil && ctx.Err() == nil && !o.NoEnd {
		err, ended = p.End(ctx), true
	}
	if ctx.Err() != nil && (err == nil && !ended || errors.Is(err, context.Canceled)) {
		// No end marker: the trace is not over, and the live service would
		// flush its last windows as final. It ends the trace by its
		// trace_timeout instead (marked as such), or the run is published
		// again from its start.
		o.Logger.Warn().Str("topic", o.Topic).Str("trace", o.Trace).Int64("lines", p.Sent()).
			Msg("stopped before the end of the trace: lines sent so far are published, no end marker (the live service ends the trace by its trace_timeout)")
		return p.Sent(), nil
	}
	if err != nil {
		return p.Sent(), err
	}
	o.Logger.Info().Str("topic", o.Topic).Str("trace", o.Trace).Int64("lines", p.Sent()).
		Float64("lines_per_s", float64(p.Sent())/time.Since(start).Seconds()).Msg("published")
	return p.Sent(), nil
}

// PublishDemo publishes the StarPU trace built into the binary as Publish
// does (o.Trace defaults to the file's name), as if the run were happening
// now.
func PublishDemo(ctx context.Context, o PublishOptions) error {
	tmp, err := os.MkdirTemp("", "tracecast-live")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	path := filepath.Join(tmp, "starpu-cholesky-2cpu.trace.gz")
	if err := os.WriteFile(path, pipelines.DemoTrace(), 0o644); err != nil {
		return err
	}
	_, err = Publish(ctx, path, o)
	return err
}
