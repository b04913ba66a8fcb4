package kafka

import (
	"errors"
	"fmt"
	"time"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/internal/kafkaconn"
	"github.com/tracecast/tracecast/internal/kafkaname"
	"github.com/tracecast/tracecast/pipelines/component"
	"github.com/tracecast/tracecast/sinks/arrow"
)

// Register registers the "kafka" sink.
func Register(r *component.Registry) {
	component.RegisterSink(r, "kafka", "records published to a Kafka topic, keyed by trace id (JSON or Arrow messages)", DefaultSinkConfig, newSink)
}

// SinkConfig are the options of a "kafka" sink: records published as
// JSON messages keyed by trace id (see package sinks/kafka).
type SinkConfig struct {
	Brokers []string `yaml:"brokers"`
	Topic   string   `yaml:"topic"`
	// BatchTimeout is how long a message may wait for others (default 0:
	// a write's messages leave at once).
	BatchTimeout time.Duration `yaml:"batch_timeout"`
	// Records keeps only one record type (predictions, verdicts, alerts, ...).
	Records string `yaml:"records"`
	// Format: json (default; a message per record) or arrow (an Arrow IPC
	// stream per batch and trace).
	Format string `yaml:"format"`
	// DeliveryTimeout bounds the time a write may take, retries included
	// (Kafka producers' delivery.timeout.ms). Default 0: a broker that is
	// down or cannot store (its disk full) is waited for as long as it
	// takes, the pipeline keeping its input position (an outage: one
	// warning per interval, /readyz false); a topic that does not exist
	// fails the sink after 2 minutes.
	DeliveryTimeout time.Duration `yaml:"delivery_timeout"`
	// TLS and SASL secure the connections, as the kafka source's.
	TLS  *kafkaconn.TLS  `yaml:"tls"`
	SASL *kafkaconn.SASL `yaml:"sasl"`
}

// DefaultSinkConfig publish to a local broker.
func DefaultSinkConfig() SinkConfig {
	return SinkConfig{Brokers: []string{"127.0.0.1:9092"}, Topic: "tracecast.predictions"}
}

// Validate checks the options.
func (o *SinkConfig) Validate() error {
	var errs []error
	if len(o.Brokers) == 0 {
		errs = append(errs, errors.New("brokers: at least one"))
	}
	if o.Topic == "" {
		errs = append(errs, errors.New("topic: required"))
	} else if err := kafkaname.Topic(o.Topic); err != nil {
		errs = append(errs, err)
	}
	if o.BatchTimeout < 0 {
		errs = append(errs, fmt.Errorf("batch_timeout: %s is negative", o.BatchTimeout))
	}
	if o.DeliveryTimeout < 0 {
		errs = append(errs, fmt.Errorf("delivery_timeout: %s is negative", o.DeliveryTimeout))
	}
	if o.Format != "" && o.Format != string(FormatJSON) && o.Format != string(FormatArrow) {
		errs = append(errs, fmt.Errorf("format: %q is not json or arrow", o.Format))
	}
	errs = append(errs, component.CheckRecords(o.Records), o.TLS.Check(), o.SASL.Check())
	return errors.Join(errs...)
}

func newSink(env component.Env, o SinkConfig) (tracecast.Sink, error) {
	c, err := kafkaconn.Load(o.TLS, o.SASL)
	if err != nil {
		return nil, fmt.Errorf("kafka sink: %w", err)
	}
	s, err := New(Options{Brokers: o.Brokers, Topic: o.Topic, BatchTimeout: o.BatchTimeout,
		Format: Format(o.Format), Tables: arrow.RecordTables(""), TLS: c.TLS, SASL: c.SASL,
		Log: env.Logger, DeliveryTimeout: o.DeliveryTimeout})
	if err != nil {
		return nil, err
	}
	return component.FilterRecords(s, o.Records), nil
}
