package kafka

import (
	"context"
	"errors"
	"strconv"

	kafkago "github.com/segmentio/kafka-go"

	"github.com/tracecast/tracecast"
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
type Producer struct {
	W     *kafkago.Writer
	Trace string
	// LinesPerMessage defaults to DefaultLinesPerMessage; 1 sends a message
	// per line.
	LinesPerMessage int

	seq  int64
	msgs []kafkago.Message
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
	if len(p.msgs) == 0 {
		return nil
	}
	return p.W.WriteMessages(ctx, p.msgs...)
}

// Sent is the number of lines sent so far.
func (p *Producer) Sent() int64 { return p.seq }

// End sends the end-of-trace marker.
func (p *Producer) End(ctx context.Context) error {
	if p.W.RequiredAcks == kafkago.RequireNone {
		return errNoAcks
	}
	return p.W.WriteMessages(ctx, kafkago.Message{Key: []byte(p.Trace),
		Headers: []kafkago.Header{{Key: HeaderEnd, Value: []byte("1")}}})
}
