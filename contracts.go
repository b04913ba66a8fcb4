package tracecast

import "context"

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
	// TypeWatermarks refines Watermark per entity type name: for a type
	// listed, no later batch carries an entity of that type starting before
	// it. (One long-open state of another type holds Watermark back; a
	// stage that reads one type needs only that type's.)
	TypeWatermarks map[string]float64
}

// Len is the number of records in the batch, for the record types this
// package defines (0 for others).
func (b Batch) Len() int {
	switch v := b.Items.(type) {
	case []Line:
		return len(v)
	case []Entity:
		return len(v)
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
