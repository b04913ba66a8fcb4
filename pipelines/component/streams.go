package component

import (
	"context"
	"errors"
	"math"
	"reflect"

	"github.com/rs/zerolog"

	"github.com/tracecast/tracecast"
)

// DefaultMaxStreams bounds the traces one stage follows at once.
const DefaultMaxStreams = 4096

// PerStream runs one processor per input stream, so that a stage reading
// several traces from one topic keeps each trace's state apart (the Kafka
// source names streams by trace id). With a single stream (a file) it is
// the processor itself. Streams are flushed at their StreamEnd marker, or
// in order of first appearance at the end of input.
//
// At most max streams are open at once. A new stream beyond that evicts the
// least recently active one, for good: its state is dropped without
// flushing (its records would be those of an unfinished trace), a
// tracecast.StreamDrop goes downstream so that the stages after this one
// drop what they hold of it too, and its later batches and its end marker
// are ignored (counted) until it ends or starts again (a reset). The
// eviction is logged and counted. Its records are then missing, never
// different from those of the whole trace; the service stays up instead of
// failing, and failing again after every restart on the same input.
type PerStream struct {
	newProc func(stream string) (tracecast.Processor, error)
	max     int
	procs   map[string]tracecast.Processor
	order   []string
	// used is when each open stream was last active (a batch counter).
	used map[string]uint64
	tick uint64
	// dropped holds the streams whose input is ignored until they end or
	// are reset, with why (tracecast.DropEvicted, DropFailed, or "upstream"
	// for a StreamDrop received): at most MaxDropped, the oldest forgotten
	// beyond (a run that never ends — its producer died — must not be kept
	// for ever by a service that runs for days).
	dropped Bounded[string]
	// Evictions counts the streams evicted so far; Ignored the records
	// (lines, entities) of dropped streams ignored since, and IgnoredEnds
	// their end markers.
	Evictions   int
	Ignored     int64
	IgnoredEnds int
	// TimedOut counts the streams ended by an inactivity timeout
	// (tracecast.EndTimeout), flushed as they were.
	TimedOut int
	log      zerolog.Logger
	// drop, when set, turns a stream's error into the end of that stream
	// (logged) instead of the pipeline's failure: one bad trace among many
	// on a topic must not stop the others. Its later batches are ignored
	// until it starts again (a reset).
	drop *zerolog.Logger
	// gone keeps the metrics of the streams no longer open.
	gone perStreamMetrics
}

// dropUpstream is the reason recorded for a StreamDrop received.
const dropUpstream = "upstream"

// MaxDropped bounds the dropped streams a PerStream remembers (or four
// times its max_streams, if more): beyond it, the one dropped longest ago
// is forgotten — its later input, should it come, is then followed as a
// new stream (a Paje parser fails it at its first line that refers to
// what it did not read, and drops it again under stream_errors: drop).
// A dropped stream is otherwise forgotten when it ends (its end marker,
// or the Kafka source's trace_timeout).
const MaxDropped = 65536

// DropFailedStreams makes stream errors drop the stream, logged on log,
// instead of failing the pipeline.
func (ps *PerStream) DropFailedStreams(log zerolog.Logger) *PerStream {
	ps.drop = &log
	return ps
}

func NewPerStream(max int, newProc func(stream string) (tracecast.Processor, error)) *PerStream {
	if max <= 0 {
		max = DefaultMaxStreams
	}
	dropped := MaxDropped
	if 4*max > dropped {
		dropped = 4 * max
	}
	return &PerStream{newProc: newProc, max: max, procs: map[string]tracecast.Processor{}, used: map[string]uint64{},
		dropped: Bounded[string]{Max: dropped}, log: zerolog.Nop()}
}

// LogTo sets the logger evictions are reported on.
func (ps *PerStream) LogTo(log zerolog.Logger) *PerStream {
	ps.log = log
	return ps
}

func (ps *PerStream) Process(ctx context.Context, in tracecast.Batch, emit tracecast.Emit) error {
	if ps.dropped.Has(in.Stream) {
		ps.Ignored += itemsLen(in)
		return nil
	}
	ps.tick++
	p := ps.procs[in.Stream]
	if p == nil {
		if len(ps.procs) >= ps.max {
			if err := ps.evictOldest(ctx, in.Stream, emit); err != nil {
				return err
			}
		}
		var err error
		if p, err = ps.newProc(in.Stream); err != nil {
			return err
		}
		ps.procs[in.Stream] = p
		ps.order = append(ps.order, in.Stream)
	}
	ps.used[in.Stream] = ps.tick
	return ps.check(ctx, in.Stream, p.Process(ctx, in, emit), emit)
}

// itemsLen counts a batch's records, whatever their type.
func itemsLen(b tracecast.Batch) int64 {
	if n := b.Len(); n > 0 {
		return int64(n)
	}
	if v := reflect.ValueOf(b.Items); v.Kind() == reflect.Slice {
		return int64(v.Len())
	}
	return 0
}

// evictOldest drops the least recently active stream to make room for
// stream, and tells the stages downstream to drop it too.
func (ps *PerStream) evictOldest(ctx context.Context, stream string, emit tracecast.Emit) error {
	oldest, at := "", uint64(0)
	for _, s := range ps.order {
		if u := ps.used[s]; oldest == "" || u < at {
			oldest, at = s, u
		}
	}
	ps.forget(oldest)
	ps.dropped.Set(oldest, tracecast.DropEvicted)
	ps.Evictions++
	ps.log.Warn().Str("evicted", oldest).Str("for", stream).Int("max_streams", ps.max).Int("evictions", ps.Evictions).
		Msg("too many streams open: the least recently active one is dropped for good, unflushed (its later records are missing, downstream too), its later input ignored until it ends or restarts")
	return emitDrop(ctx, oldest, tracecast.DropEvicted, emit)
}

// emitDrop tells the stages downstream that stream was dropped.
func emitDrop(ctx context.Context, stream, reason string, emit tracecast.Emit) error {
	return emit(ctx, tracecast.Batch{Stream: stream, Items: tracecast.StreamDrop{Reason: reason}, Watermark: math.NaN()})
}

// check applies the error policy to a stream's error.
func (ps *PerStream) check(ctx context.Context, stream string, err error, emit tracecast.Emit) error {
	if err == nil || ps.drop == nil || ctxErr(err) {
		return err
	}
	ps.drop.Error().Err(err).Str("stream", stream).Msg("stream dropped: its later input is ignored, and the stages after this one drop it too (stream_errors: drop)")
	ps.forget(stream)
	ps.dropped.Set(stream, tracecast.DropFailed)
	ps.gone.dropped++
	return emitDrop(ctx, stream, tracecast.DropFailed, emit)
}

func ctxErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// Flush flushes every stream still open, in order of first appearance.
func (ps *PerStream) Flush(ctx context.Context, emit tracecast.Emit) error {
	for _, s := range ps.order {
		if p := ps.procs[s]; p != nil {
			if err := ps.check(ctx, s, p.Flush(ctx, emit), emit); err != nil {
				return err
			}
		}
	}
	for _, s := range ps.order {
		ps.retire(ps.procs[s], true, ps.tick)
	}
	ps.procs, ps.order = map[string]tracecast.Processor{}, nil
	clear(ps.used)
	return nil
}

// EndStream flushes and forgets one stream. The end of a dropped stream is
// ignored (counted): it emits nothing. A stream ended by an inactivity
// timeout (end.Reason tracecast.EndTimeout) is flushed like any other, its
// records final as of the lines received; it is counted and logged. A
// processor that is a tracecast.EndReasoner learns end before its Flush
// (its final records say how the run ended).
func (ps *PerStream) EndStream(ctx context.Context, stream string, end tracecast.StreamEnd, emit tracecast.Emit) error {
	if why, ok := ps.dropped.Get(stream); ok {
		ps.dropped.Delete(stream)
		ps.IgnoredEnds++
		ps.log.Info().Str("stream", stream).Str("dropped", why).Int("ignored_ends", ps.IgnoredEnds).
			Msg("a dropped stream ended: its end is ignored, nothing flushed")
		return nil
	}
	p := ps.procs[stream]
	if p == nil {
		return nil
	}
	if end.Reason == tracecast.EndTimeout {
		ps.TimedOut++
		ps.log.Warn().Str("stream", stream).Str("end", end.Reason).Int("timed_out", ps.TimedOut).
			Msg("stream ended by timeout, without its end marker: its records are flushed from the lines received")
	}
	if r, ok := p.(tracecast.EndReasoner); ok {
		r.EndReason(end)
	}
	err := p.Flush(ctx, emit)
	if err == nil { // its metrics as flushed, its gauges kept
		ps.retire(p, true, ps.tick)
		ps.unlist(stream)
	} else {
		ps.forget(stream)
	}
	return ps.check(ctx, stream, err, emit)
}

// ResetStream forgets one stream, or all of them for "".
func (ps *PerStream) ResetStream(stream string) {
	if stream == "" {
		for _, s := range ps.order {
			ps.retire(ps.procs[s], false, 0)
		}
		ps.procs, ps.order = map[string]tracecast.Processor{}, nil
		ps.dropped.Clear()
		clear(ps.used)
		return
	}
	ps.dropped.Delete(stream)
	ps.forget(stream)
}

// DropStream forgets one stream, dropped upstream, without flushing it,
// and ignores its later input until it ends or is reset.
func (ps *PerStream) DropStream(stream string) {
	ps.forget(stream)
	if !ps.dropped.Has(stream) {
		ps.dropped.Set(stream, dropUpstream)
	}
}

// forget drops a stream's processor, its counters kept (see Metrics).
func (ps *PerStream) forget(stream string) {
	if p := ps.procs[stream]; p != nil {
		ps.retire(p, false, 0)
	}
	ps.unlist(stream)
}

// unlist drops a stream's processor.
func (ps *PerStream) unlist(stream string) {
	delete(ps.procs, stream)
	delete(ps.used, stream)
	for i, s := range ps.order {
		if s == stream {
			ps.order = append(ps.order[:i], ps.order[i+1:]...)
			break
		}
	}
}
