package kafka

import (
	"errors"
	"fmt"
	"time"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/internal/kafkaconn"
	"github.com/tracecast/tracecast/pipelines/component"
)

// Register registers the "kafka" source.
func Register(r *component.Registry) {
	component.RegisterSource(r, "kafka", "trace lines from a Kafka topic, read by a consumer group, committed at least once", DefaultSourceConfig, newSource)
}

// SourceConfig are the options of a "kafka" source: trace lines from
// a topic, read with a consumer group and committed at least once (see
// package ingest/kafka for the message format and the commit rule).
type SourceConfig struct {
	Brokers []string `yaml:"brokers"`
	Topic   string   `yaml:"topic"`
	Group   string   `yaml:"group"`
	// Start: earliest (default) or latest, for partitions the group never
	// committed.
	Start          string        `yaml:"start"`
	CommitInterval time.Duration `yaml:"commit_interval"`
	MaxWait        time.Duration `yaml:"max_wait"`
	SessionTimeout time.Duration `yaml:"session_timeout"`
	BatchLines     int           `yaml:"batch_lines"`
	// TraceTimeout ends a trace silent that long (default 10m; 0s: never,
	// which lets a dead producer hold its partition's commits back); see
	// ingest/kafka.Options.
	TraceTimeout time.Duration `yaml:"trace_timeout"`
	// MaxOpenTraces bounds the traces open at once (default 65536): one
	// more evicts the least recently active for good, its records
	// missing downstream, counted in kafka_traces_evicted_total; the
	// bound that holds with trace_timeout 0s. See
	// ingest/kafka.Options.MaxOpenTraces.
	MaxOpenTraces int `yaml:"max_open_traces"`
	// TLS and SASL secure the connections: `tls: {ca: ca.pem, cert:
	// client.pem, key: client-key.pem}` (`tls: {}` for TLS with the
	// system's CAs), `sasl: {mechanism: SCRAM-SHA-256, user: tracecast,
	// password_env: KAFKA_PASSWORD}` (or password_file); see
	// internal/kafkaconn.
	TLS  *kafkaconn.TLS  `yaml:"tls"`
	SASL *kafkaconn.SASL `yaml:"sasl"`
}

// DefaultTraceTimeout ends a trace whose producer went silent: a run that
// died without its end marker must not hold its partition's commits back
// for ever (every restart would read the partition again from that trace).
const DefaultTraceTimeout = 10 * time.Minute

// DefaultSourceConfig read from a local broker.
func DefaultSourceConfig() SourceConfig {
	return SourceConfig{Brokers: []string{"127.0.0.1:9092"}, Topic: "tracecast.traces", Group: "tracecast",
		Start: "earliest", CommitInterval: time.Second, MaxWait: 250 * time.Millisecond, SessionTimeout: 6 * time.Second, BatchLines: 4096,
		TraceTimeout: DefaultTraceTimeout, MaxOpenTraces: DefaultMaxOpenTraces}
}

func (o *SourceConfig) ingest() Options {
	return Options{Brokers: o.Brokers, Topic: o.Topic, Group: o.Group, Start: o.Start, CommitInterval: o.CommitInterval,
		MaxWait: o.MaxWait, SessionTimeout: o.SessionTimeout, BatchLines: o.BatchLines, TraceTimeout: o.TraceTimeout,
		MaxOpenTraces: o.MaxOpenTraces}
}

// Validate checks the options (the tls files and the sasl password are
// read when the source is built).
func (o *SourceConfig) Validate() error {
	if o.BatchLines <= 0 {
		return fmt.Errorf("batch_lines: must be positive (got %d)", o.BatchLines)
	}
	if o.MaxOpenTraces <= 0 {
		return fmt.Errorf("max_open_traces: must be positive (got %d)", o.MaxOpenTraces)
	}
	_, err := New(o.ingest())
	return errors.Join(err, o.TLS.Check(), o.SASL.Check())
}

// progressSource adapts the source's counts to ProgressReporter.
type progressSource struct{ *Source }

func (s progressSource) SourceProgress() component.SourceProgress {
	return component.SourceProgress{Read: s.Stats().Bytes, Total: -1}
}

func newSource(env component.Env, o SourceConfig) (tracecast.Source, error) {
	io := o.ingest()
	io.Logger = env.Logger
	c, err := kafkaconn.Load(o.TLS, o.SASL)
	if err != nil {
		return nil, fmt.Errorf("kafka source: %w", err)
	}
	io.TLS, io.SASL = c.TLS, c.SASL
	s, err := New(io)
	if err != nil {
		return nil, err
	}
	return progressSource{s}, nil
}

// Follows: a topic is followed as messages come, for as long as the
// pipeline runs (component.Follower).
func (s *Source) Follows() bool { return true }
