// Package kafka publishes records to a Kafka topic for schedulers to
// subscribe to: one JSON message per record (a versioned schema), keyed by
// trace id so that one trace's records stay in one partition, in order.
//
// Message value: "schema" (the versioned schema name, e.g.
// "tracecast.prediction/1") then the record's JSON object as the JSON-lines
// output writes it ("record", e.g. "prediction", first; null for what does
// not apply; no HTML escaping; docs/schemas/ has its JSON Schema).
// Consumers dispatch on "record" or "schema" and de-duplicate on "id". The
// schema version changes with any incompatible change of the fields.
// Headers say the same without parsing the value: "record" (the record
// type), "schema" and "content-type: application/json".
//
// With FormatArrow, a message carries instead the records of one batch for
// one trace as a standalone Arrow IPC stream (schema, one record batch),
// the same columns as the Arrow file outputs, with headers "record",
// "schema" and "content-type: application/vnd.apache.arrow.stream".
package kafka

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/rs/zerolog"
	kafkago "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/sasl"
	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/internal/kafkaconn"
	"github.com/tracecast/tracecast/internal/kafkaname"
	"github.com/tracecast/tracecast/pipelines/component"
	"github.com/tracecast/tracecast/sinks/arrow"
	"github.com/tracecast/tracecast/sinks/jsonl"
)

// Options configure a Sink.
type Options struct {
	Brokers []string
	Topic   string
	// BatchTimeout is how long a message may wait for others to share its
	// batch. Write hands a whole batch to the writer at once, so waiting
	// gathers nothing more: it is only delay, and the default (0) is none:
	// a write's messages leave as soon as they are all queued. (kafka-go's
	// own default, 1 s, would hold every prediction for a second.)
	BatchTimeout time.Duration
	// Transport is kafka-go's transport (nil: the sink's own, with TLS
	// and SASL).
	Transport kafkago.RoundTripper
	// TLS (nil: plaintext) and SASL (nil: none) secure the connections of
	// the sink's own transport (see internal/kafkaconn for building them
	// from options).
	TLS  *tls.Config
	SASL sasl.Mechanism
	// Format is FormatJSON (default: a message per record) or FormatArrow
	// (a message per batch and trace); Arrow needs Tables.
	Format Format
	Tables []arrow.Table
	// Log receives the warnings while sending fails: one when it starts,
	// then one per interval (kafkaconn.Sender; zero value: nothing logged).
	Log zerolog.Logger
	// DeliveryTimeout bounds how long a Flush may take, retries included
	// (0: a broker that is down or cannot store is waited for; a topic
	// that does not exist fails after kafkaconn.DefaultDeliveryTimeout).
	DeliveryTimeout time.Duration
}

// Format is the message encoding.
type Format string

// Message encodings.
const (
	FormatJSON  Format = "json"
	FormatArrow Format = "arrow"
)

// The content-type headers of Arrow and JSON messages.
const (
	ArrowContentType = "application/vnd.apache.arrow.stream"
	JSONContentType  = "application/json"
)

// Sink writes batches to a topic. It is a tracecast.Flusher: the messages
// of the batches written while more are queued go out together at Flush
// (or once MaxPending are gathered), each acknowledged by all in-sync
// replicas when Flush returns. One request per batch made a live pipeline
// with thousands of traces wait on round trips to the broker.
type Sink struct {
	w   *kafkago.Writer
	snd *kafkaconn.Sender
	enc *arrow.StreamEncoder // FormatArrow
	own *kafkago.Transport   // closed with the sink, so no connection outlives it
	// check, until the first write, tells a broker that refuses the
	// connection (wrong password, untrusted certificate) from one not up
	// yet, which the writer retries.
	check func(context.Context) error
	buf   []kafkago.Message
	// pending are the messages gathered since the last Flush, pendingBytes
	// their size.
	pending      []kafkago.Message
	pendingBytes int
	// keys holds the trace id of each record of the batch being written
	// (Arrow format).
	keys []string
	log  zerolog.Logger
}

// New returns a sink; it connects on the first write.
func New(o Options) (*Sink, error) {
	if len(o.Brokers) == 0 || o.Topic == "" {
		return nil, errors.New("kafka sink: brokers and topic are required")
	}
	if err := kafkaname.Topic(o.Topic); err != nil {
		return nil, fmt.Errorf("kafka sink: %w", err)
	}
	var enc *arrow.StreamEncoder
	switch o.Format {
	case "", FormatJSON:
	case FormatArrow:
		if len(o.Tables) == 0 {
			return nil, errors.New("kafka sink: arrow format needs the record tables")
		}
		enc = arrow.NewStreamEncoder(o.Tables)
	default:
		return nil, fmt.Errorf("kafka sink: format %q is not json or arrow", o.Format)
	}
	if o.BatchTimeout <= 0 {
		// kafka-go takes 0 for its default; a nanosecond's timer fires
		// once the write has queued its messages (they are queued under
		// the lock the timer's goroutine needs to send the batch).
		o.BatchTimeout = time.Nanosecond
	}
	client := kafkaconn.Client{TLS: o.TLS, SASL: o.SASL}
	var own *kafkago.Transport
	if o.Transport == nil {
		own = client.Transport()
		o.Transport = own
	}
	brokers := o.Brokers
	check := func(ctx context.Context) error { return client.Check(ctx, brokers) }
	s := &Sink{own: own, enc: enc, check: check, log: o.Log, w: &kafkago.Writer{
		Addr:         kafkago.TCP(o.Brokers...),
		Topic:        o.Topic,
		Balancer:     &kafkago.Hash{},
		RequiredAcks: kafkago.RequireAll,
		BatchTimeout: o.BatchTimeout,
		// A Flush sends up to MaxPending messages: in as few requests as
		// the broker's message size allows (BatchBytes, 1 MiB).
		BatchSize: MaxPending,
		Transport: o.Transport,
		// A broker that creates topics on first use (Kafka's default,
		// tracecast broker's) creates the output topic.
		AllowAutoTopicCreation: true,
		// One attempt per call: the Sender retries, with its backoff, and
		// counts the outage from the first failure. kafka-go's own ten
		// attempts hid a 10 s broker outage from /readyz and the outage
		// metrics in 8 of 9 faults of a 30-minute soak.
		MaxAttempts: 1,
	}}
	s.snd = &kafkaconn.Sender{W: s.w, Log: o.Log, What: "kafka sink", Brokers: o.Brokers, DeliveryTimeout: o.DeliveryTimeout}
	return s, nil
}

// Write publishes one message per record (JSON), or per run of records of
// one trace (Arrow). Schema names and trace ids come from the root record
// registry (tracecast.RecordTypeOf), by typed code rather than reflection on
// each record. The first write fails when a broker refuses the connection
// (see kafkaconn.Client.Check).
func (s *Sink) Write(ctx context.Context, b tracecast.Batch) error {
	if s.check != nil {
		if err := s.check(ctx); err != nil {
			return fmt.Errorf("kafka sink %s: %w", s.w.Topic, err)
		}
		s.check = nil
	}
	rt, ok := tracecast.RecordTypeOf(b.Items)
	if !ok {
		return fmt.Errorf("kafka sink: no schema for %T records", b.Items)
	}
	s.buf, s.keys = s.buf[:0], s.keys[:0]
	err := rt.Each(b.Items, func(rec any, trace string) error {
		if trace == "" {
			trace = b.Stream
		}
		if s.enc != nil {
			s.keys = append(s.keys, trace)
			return nil
		}
		value, err := Encode(rt.Schema, rec)
		if err != nil {
			return err
		}
		s.buf = append(s.buf, kafkago.Message{Key: []byte(trace), Value: value, Headers: Headers(rt, JSONContentType)})
		return nil
	})
	if err != nil {
		return err
	}
	if s.enc != nil {
		if err := s.arrowMessages(b.Items, rt); err != nil {
			return err
		}
	}
	for i := range s.buf {
		s.pendingBytes += len(s.buf[i].Key) + len(s.buf[i].Value)
	}
	s.pending = append(s.pending, s.buf...)
	clear(s.buf)
	if len(s.pending) >= MaxPending || s.pendingBytes >= MaxPendingBytes {
		return s.Flush(ctx)
	}
	return nil
}

// What a Sink gathers before it sends without waiting for Flush.
const (
	MaxPending      = 4096
	MaxPendingBytes = 4 << 20
)

// Flush sends the gathered messages and returns once all are acknowledged.
// A broker that cannot be reached (restarting, a leader moving) or cannot
// store (KAFKA_STORAGE_ERROR: its disk full) is waited for until ctx ends
// or the delivery timeout passed (kafkaconn.Sender): an outage, during
// which the pipeline's input position stays where it was (its offsets are
// committed once the sinks flushed). Consumers may see duplicates with
// equal ids and content, never a loss.
func (s *Sink) Flush(ctx context.Context) error {
	if len(s.pending) == 0 {
		return nil
	}
	if err := s.snd.Write(ctx, s.pending...); err != nil {
		return err
	}
	clear(s.pending)
	s.pending, s.pendingBytes = s.pending[:0], 0
	return nil
}

// arrowMessages queues one Arrow message per run of records of one trace
// (s.keys holds each record's trace id).
func (s *Sink) arrowMessages(items any, rt tracecast.RecordType) error {
	v := reflect.ValueOf(items)
	for i := 0; i < len(s.keys); {
		j := i + 1
		for j < len(s.keys) && s.keys[j] == s.keys[i] {
			j++
		}
		value, err := s.enc.Encode(v.Slice(i, j).Interface())
		if err != nil {
			return fmt.Errorf("kafka sink: %w", err)
		}
		s.buf = append(s.buf, kafkago.Message{Key: []byte(s.keys[i]), Value: value, Headers: Headers(rt, ArrowContentType)})
		i = j
	}
	return nil
}

// Headers are a message's headers: "record" (the record type's name),
// "schema" (its versioned schema) and "content-type".
func Headers(rt tracecast.RecordType, contentType string) []kafkago.Header {
	return []kafkago.Header{{Key: "record", Value: []byte(rt.Name)}, {Key: "schema", Value: []byte(rt.Schema)},
		{Key: "content-type", Value: []byte(contentType)}}
}

// Encode is a record's message value: "schema" first, then the fields of
// its JSON-lines object (jsonl.AppendRecord), "record" included.
func Encode(schema string, record any) ([]byte, error) {
	b, err := jsonl.AppendRecord(nil, record)
	if err != nil {
		return nil, err
	}
	if len(b) < 2 || b[0] != '{' {
		return nil, fmt.Errorf("kafka sink: %T is not a JSON object", record)
	}
	out := make([]byte, 0, len(b)+len(schema)+16)
	out = append(out, `{"schema":`...)
	out = jsonl.AppendString(out, schema)
	if len(b) > 2 {
		out = append(out, ',')
	}
	return append(out, b[1:]...), nil
}

// Close flushes and closes the producer.
func (s *Sink) Close(ctx context.Context) error {
	err := s.Flush(ctx)
	err = errors.Join(err, s.w.Close())
	if s.enc != nil {
		s.enc.Release()
	}
	if s.own != nil {
		s.own.CloseIdleConnections()
	}
	return err
}

// LiveMetrics reports the sink's outage, current when scraped
// (component.LiveMetricsReporter): kafka_write_outage (1 while sending
// fails), its duration and the failed attempts.
func (s *Sink) LiveMetrics(add func(component.Metric)) {
	o := s.snd.Outage()
	down, secs := 0.0, 0.0
	if o.Down() {
		down, secs = 1, time.Since(o.Since).Seconds()
	}
	labels := []string{"topic", s.w.Topic}
	add(component.Metric{Name: "kafka_write_outage", Help: "1 while a kafka sink cannot send (broker down, disk full, topic missing): the pipeline keeps its input position and retries", Labels: labels, Value: down})
	add(component.Metric{Name: "kafka_write_outage_seconds", Help: "how long a kafka sink's current outage has lasted (0: none)", Labels: labels, Value: secs})
	add(component.Metric{Name: "kafka_write_retries_total", Help: "failed attempts to send of a kafka sink, outages included", Labels: labels, Value: float64(s.snd.Retries()), Counter: true})
}

// Unready says why the sink cannot send, while it cannot (/readyz).
func (s *Sink) Unready() string {
	o := s.snd.Outage()
	if !o.Down() {
		return ""
	}
	return fmt.Sprintf("kafka sink %s: %s (for %v, %d attempts)", s.w.Topic, o.Cause, time.Since(o.Since).Round(time.Second), o.Attempts)
}
