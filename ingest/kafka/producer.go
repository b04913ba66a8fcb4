package kafka

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/rs/zerolog"
	kafkago "github.com/segmentio/kafka-go"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/internal/kafkaconn"
)

// DefaultLinesPerMessage is how many lines a Producer packs per message.
const DefaultLinesPerMessage = 256

// Producer writes one trace's lines in the format Source reads: keyed by
// the trace id, several lines per message, numbered by tracecast-seq, and an
// end marker. The writer should use a key-hashing balancer, and must ask
// for acknowledgements (RequiredAcks RequireOne or RequireAll): with
// kafka-go's zero value, RequireNone, a message the broker refuses (one
// larger than its maximum message size, say) is lost without an error, and
// a trace whose first message is lost cannot be read at all.
//
// A broker that cannot be reached, or cannot store, is waited for
// (kafkaconn.Sender) until the context ends or DeliveryTimeout passed, a
// topic that does not exist until DeliveryTimeout (or kafkaconn's
// default) passed; a write is never more than one produce request (one
// batch of the writer), so that a failed write leaves no later message on
// the topic: a retry repeats messages, never reorders them, and the Source
// drops the repeated lines by their tracecast-seq.
type Producer struct {
	W     *kafkago.Writer
	Trace string
	// LinesPerMessage defaults to DefaultLinesPerMessage; 1 sends a message
	// per line.
	LinesPerMessage int
	// Log receives the warnings while sending fails (one when it starts,
	// then one per interval: kafkaconn.Sender).
	Log zerolog.Logger
	// DeliveryTimeout bounds how long a write may take, retries included
	// (0: wait for ever for a broker that is down; a missing topic fails
	// after kafkaconn.DefaultDeliveryTimeout). Brokers name the brokers
	// in messages.
	DeliveryTimeout time.Duration
	Brokers         []string

	seq    int64
	msgs   []kafkago.Message
	sender *kafkaconn.Sender
}

// send sends msgs through the Producer's kafkaconn.Sender.
func (p *Producer) send(ctx context.Context, msgs ...kafkago.Message) error {
	if p.sender == nil {
		p.sender = &kafkaconn.Sender{W: p.W, Log: p.Log, What: "kafka producer", Brokers: p.Brokers, DeliveryTimeout: p.DeliveryTimeout}
	}
	return p.sender.Write(ctx, msgs...)
}

// errNoAcks refuses a writer that would drop refused messages silently.
var errNoAcks = errors.New("kafka producer: the writer asks for no acknowledgement (RequiredAcks RequireNone): refused messages would be lost silently; use RequireAll")

// Lines sends lines (their Data) and returns when they are acknowledged.
func (p *Producer) Lines(ctx context.Context, lines []tracecast.Line) error {
	if p.W.RequiredAcks == kafkago.RequireNone {
		return errNoAcks
	}
	per := p.LinesPerMessage
	if per <= 0 {
		per = DefaultLinesPerMessage
	}
	p.msgs = p.msgs[:0]
	for len(lines) > 0 {
		n := min(per, len(lines))
		size := 0
		for _, l := range lines[:n] {
			size += len(l.Data) + 1
		}
		v := make([]byte, 0, size)
		for _, l := range lines[:n] {
			v = append(append(v, l.Data...), '\n')
		}
		p.msgs = append(p.msgs, kafkago.Message{Key: []byte(p.Trace), Value: v,
			Headers: []kafkago.Header{{Key: HeaderSeq, Value: strconv.AppendInt(nil, p.seq, 10)}}})
		p.seq += int64(n)
		lines = lines[n:]
	}
	for msgs := p.msgs; len(msgs) > 0; {
		n := p.oneBatch(msgs)
		if err := p.send(ctx, msgs[:n]...); err != nil {
			return err
		}
		msgs = msgs[n:]
	}
	clear(p.msgs)
	return nil
}

// oneBatch is how many of msgs (at least one) the writer sends in one
// produce request: at most its BatchSize messages and, counted with room
// to spare for the record overhead, half its BatchBytes.
func (p *Producer) oneBatch(msgs []kafkago.Message) int {
	maxN, maxBytes := p.W.BatchSize, p.W.BatchBytes
	if maxN <= 0 {
		maxN = 100 // kafka-go's defaults
	}
	if maxBytes <= 0 {
		maxBytes = 1 << 20
	}
	size := 0
	for i := range msgs {
		size += len(msgs[i].Key) + len(msgs[i].Value) + 128
		for _, h := range msgs[i].Headers {
			size += len(h.Key) + len(h.Value) + 16
		}
		if i > 0 && (i >= maxN || int64(size) > maxBytes/2) {
			return i
		}
	}
	return len(msgs)
}

// Sent is the number of lines sent so far.
func (p *Producer) Sent() int64 { return p.seq }

// End sends the end-of-trace marker.
func (p *Producer) End(ctx context.Context) error {
	if p.W.RequiredAcks == kafkago.RequireNone {
		return errNoAcks
	}
	return p.send(ctx, kafkago.Message{Key: []byte(p.Trace),
		Headers: []kafkago.Header{{Key: HeaderEnd, Value: []byte("1")}}})
}
