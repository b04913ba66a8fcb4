package tracecast

import (
	"context"
	"sync/atomic"
)

// Batch carries many records of one kind between components. Items holds a
// slice of values ([]Line, []Entity, ...); receivers type-switch on it. A batch
// is shared read-only by every consumer of an edge: a component that wants to
// keep records past its call copies them.
type Batch struct {
	// Stream names the stream the records come from (a file path, a trace id).
	Stream string
	// Items is a slice of records of a single type.
	Items any
	// Watermark is an event-time low watermark: no later batch on this edge
	// carries a record older than it. NaN when unknown.
	Watermark float64
	// TypeWatermarks refines Watermark per entity type name: for a state
	// type listed, no later batch carries a state of that type starting
	// before it; for a variable type, no later batch carries a piece
	// ending before it (the piece in force is emitted at the variable's
	// next change). (One long-open state of another type holds Watermark back; a
	// stage that reads one type needs only that type's.)
	TypeWatermarks map[string]float64
	// VariableStarts is, per variable type name, a low watermark on the
	// starts of the pieces still to come: the earliest change not emitted
	// yet, the piece in force included (it is emitted at the next change).
	// A stage that places each change at its own time sweeps no further;
	// one variable set once, of a type it does not read, no longer holds
	// it back as it holds Watermark.
	VariableStarts map[string]float64
	// Meta describes the records of the stream, when their producer knows
	// more than each record says (a signal's class, period, R, t0, rules
	// and time unit; a prediction run's period). File sinks record it with
	// their schema (Arrow metadata) when it comes with their first batch.
	Meta map[string]string
	// Recycle, when set, gives Items back to their producer, which fills
	// them again instead of allocating new ones: at gigabytes of entities
	// per run that is most of what the collector would otherwise do. The
	// runtime calls it once the batch's only consumer, a sink or a stage
	// that keeps nothing of a batch (ItemsForgetter), has written or
	// processed it; on any other path it is never called and the items
	// are left to the collector.
	Recycle func()
}

// ItemsForgetter is implemented by sinks and stages that keep nothing of
// a batch's Items once Write or Process returns (they format or copy the
// records), so that the runtime may recycle them (Batch.Recycle).
type ItemsForgetter interface {
	ForgetsItems() bool
}

// Len is the number of records in the batch, for the record types this
// package defines (the lines of chunks; 0 for others).
func (b Batch) Len() int {
	switch v := b.Items.(type) {
	case []Line:
		return len(v)
	case []Entity:
		return len(v)
	case []Chunk:
		n := int64(0)
		for i := range v {
			n += v[i].Lines
		}
		return int(n)
	}
	return 0
}

// Emit sends a batch downstream. It blocks while the consumer is busy
// (backpressure) and returns ctx.Err() when the pipeline is stopping.
type Emit func(ctx context.Context, b Batch) error

// Source produces batches from the outside world (files, Kafka). Run emits
// until the input is exhausted, then returns nil; when ctx is cancelled (a
// graceful stop) it returns promptly, with nil or ctx.Err().
type Source interface {
	Run(ctx context.Context, emit Emit) error
}

// Processor turns batches into batches: parsers (lines to records) and stages
// (records to records). The runtime calls Process for each input batch, from
// one goroutine, then Flush once at the end of input or on a graceful stop.
type Processor interface {
	Process(ctx context.Context, in Batch, emit Emit) error
	Flush(ctx context.Context, emit Emit) error
}

// Sink writes batches out. Write returns once the batch is as durable as the
// sink promises; Close flushes and finalises (Arrow footers, producer flush).
// Close is called exactly once, also after errors.
type Sink interface {
	Write(ctx context.Context, b Batch) error
	Close(ctx context.Context) error
}

// Control items travel in Batch.Items, in order with the data, from a source
// through every stage to every sink. The runtime handles them: it forwards
// them downstream after giving them to the processors that want them.

// StreamEnd says that Batch.Stream has ended (a Kafka trace's end marker):
// a StreamProcessor flushes what it keeps for it (final windows, verdicts)
// before the marker goes on. Reason says why, when not by its end marker.
type StreamEnd struct {
	// Reason is "" for the stream's own end (an end marker, the end of a
	// file), EndTimeout for a stream that went silent for the source's
	// inactivity timeout (Kafka's trace_timeout).
	Reason string
}

// EndTimeout is the StreamEnd.Reason of a stream ended by an inactivity
// timeout: a producer that died without its end marker.
const EndTimeout = "timeout"

// EndMarker is how a record that says how its run ended (a skill record's
// end) names a stream's own end: its end marker, or the end of a file.
const EndMarker = "marker"

// EndedBy is how a run ended, as records say it: EndMarker for the
// stream's own end (Reason ""), else the reason (EndTimeout).
func (e StreamEnd) EndedBy() string {
	if e.Reason == "" {
		return EndMarker
	}
	return e.Reason
}

// EndReasoner is implemented by per-stream processors whose final records
// say how their stream ended. component.PerStream calls EndReason with the
// stream's StreamEnd just before the Flush that ends it; a Flush without
// it (the end of a file, of a pipeline's input) is the stream's own end.
type EndReasoner interface {
	EndReason(end StreamEnd)
}

// StreamDrop says that Batch.Stream was dropped upstream, unfinished: a
// stage evicted it (max_streams), it failed (stream_errors: drop) or lines
// of it were lost before the source. A
// StreamProcessor forgets its state for it without emitting anything (what
// it would emit would be records of part of the stream, which differ from
// those of the whole), and ignores the stream's later batches until it ends
// (StreamEnd, itself ignored) or is reset (StreamReset): its records are
// missing downstream, never changed.
type StreamDrop struct {
	// Reason: DropEvicted, DropFailed or DropLinesLost.
	Reason string
}

// StreamDrop reasons.
const (
	DropEvicted = "evicted"
	DropFailed  = "failed"
	// DropLinesLost: a Kafka source found lines missing in the trace.
	DropLinesLost = "lines-lost"
)

// StreamReset says that Batch.Stream (every stream when Stream is empty)
// will be read again from its start: a StreamProcessor forgets its state
// for it without emitting anything (a Kafka consumer-group rebalance).
type StreamReset struct{}

// StreamProcessor is a Processor that keeps state per stream (one trace
// among several read from one topic).
type StreamProcessor interface {
	Processor
	// EndStream flushes the stream's state; end says why it ended.
	EndStream(ctx context.Context, stream string, end StreamEnd, emit Emit) error
	ResetStream(stream string)
	// DropStream forgets the stream's state without emitting and ignores
	// its later batches until it ends or is reset (StreamDrop).
	DropStream(stream string)
}

// Barrier is a checkpoint marker. A source emits one after some input; it
// flows behind that input through every path of the graph, and each sink
// releases it once everything it received before it is durable. When the
// last copy is released, done runs: everything derived from the input before
// the barrier is durable, so the source may commit its position (Kafka
// offsets). A barrier that is dropped (an error, a hard stop) never runs
// done, so nothing is committed on its behalf.
type Barrier struct {
	refs    atomic.Int64
	dropped atomic.Bool
	done    func()
}

// NewBarrier returns a barrier held once, by its creator.
func NewBarrier(done func()) *Barrier {
	b := &Barrier{done: done}
	b.refs.Store(1)
	return b
}

// Hold adds n holders: a component passing the barrier to n consumers holds
// n more, then releases its own.
func (b *Barrier) Hold(n int) { b.refs.Add(int64(n)) }

// Release drops one holder; the last one runs done, unless a copy was
// dropped.
func (b *Barrier) Release() {
	if b.refs.Add(-1) == 0 && b.done != nil && !b.dropped.Load() {
		b.done()
	}
}

// Drop marks a copy that could not be delivered: done will never run, since
// what followed that path may not be durable.
func (b *Barrier) Drop() { b.dropped.Store(true) }

// IsControl reports whether a batch carries a control item rather than
// records.
func (b Batch) IsControl() bool {
	switch b.Items.(type) {
	case StreamEnd, StreamReset, StreamDrop, *Barrier:
		return true
	}
	return false
}

// Flusher is implemented by sinks that gather what they are given while
// more is queued and send it together (a Kafka producer: one request for
// many batches instead of one round trip each). Their Write may return
// before the batch is durable; the runtime calls Flush when the sink's
// queue is empty and before it releases a barrier, and Close flushes what
// is left. A Flusher bounds what it gathers: past its own limit, Write
// sends.
type Flusher interface {
	Flush(ctx context.Context) error
}

// CloseDurable is implemented by sinks whose output is durable only once
// closed (an Arrow file is unreadable without its footer): the runtime
// releases the barriers they receive after Close instead of after Write.
type CloseDurable interface {
	DurableOnClose() bool
}

// Aborter is implemented by sinks whose output is valid only once complete
// (an Arrow or Parquet file, written to PATH.tmp and renamed by Close). When
// the pipeline fails or is stopped hard, the runtime calls Abort instead of
// Close: the sink removes what it wrote and leaves the file at its path as
// it was, so that a failed run never replaces a good output with a
// truncated one that reads as complete. Streams written as they go (text,
// JSON lines, an Arrow stream, a Kafka topic) keep what they wrote and need
// not implement it.
type Aborter interface {
	Abort() error
}
