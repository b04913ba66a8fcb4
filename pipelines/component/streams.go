package component

import (
	"context"
	"errors"

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
// least recently active one: its state is dropped without flushing (its
// records would be those of an unfinished trace), the eviction is logged
// and counted, and its later batches are ignored until it ends or starts
// again — the service stays up instead of failing, and failing again after
// every restart on the same input.
type PerStream struct {
	newProc func(stream string) (tracecast.Processor, error)
	max     int
	procs   map[string]tracecast.Processor
	order   []string
	// used is when each open stream was last active (a batch counter).
	used    map[string]uint64
	tick    uint64
	evicted map[string]bool
	// Evictions counts the streams evicted so far.
	Evictions int
	log       zerolog.Logger
	// drop, when set, turns a stream's error into the end of that stream
	// (logged) instead of the pipeline's failure: one bad trace among many
	// on a topic must not stop the others. Its later batches are ignored
	// until it starts again (a reset).
	drop   *zerolog.Logger
	failed map[string]bool
	// gone keeps the metrics of the streams no longer open.
	gone perStreamMetrics
}

// DropFailedStreams makes stream errors drop the stream, logged on log,
// instead of failing the pipeline.
func (ps *PerStream) DropFailedStreams(log zerolog.Logger) *PerStream {
	ps.drop, ps.failed = &log, map[string]bool{}
	return ps
}

func NewPerStream(max int, newProc func(stream string) (tracecast.Processor, error)) *PerStream {
	if max <= 0 {
		max = DefaultMaxStreams
	}
	return &PerStream{newProc: newProc, max: max, procs: map[string]tracecast.Processor{}, used: map[string]uint64{},
		evicted: map[string]bool{}, log: zerolog.Nop()}
}

// LogTo sets the logger evictions are reported on.
func (ps *PerStream) LogTo(log zerolog.Logger) *PerStream {
	ps.log = log
	return ps
}

func (ps *PerStream) Process(ctx context.Context, in tracecast.Batch, emit tracecast.Emit) error {
	if ps.failed[in.Stream] || ps.evicted[in.Stream] {
		return nil
	}
	ps.tick++
	p := ps.procs[in.Stream]
	if p == nil {
		if len(ps.procs) >= ps.max {
			ps.evictOldest(in.Stream)
		}
		var err error
		if p, err = ps.newProc(in.Stream); err != nil {
			return err
		}
		ps.procs[in.Stream] = p
		ps.order = append(ps.order, in.Stream)
	}
	ps.used[in.Stream] = ps.tick
	return ps.check(in.Stream, p.Process(ctx, in, emit))
}

// evictOldest drops the least recently active stream to make room for
// stream.
func (ps *PerStream) evictOldest(stream string) {
	oldest, at := "", uint64(0)
	for _, s := range ps.order {
		if u := ps.used[s]; oldest == "" || u < at {
			oldest, at = s, u
		}
	}
	ps.forget(oldest)
	ps.evicted[oldest] = true
	ps.Evictions++
	ps.log.Warn().Str("evicted", oldest).Str("for", stream).Int("max_streams", ps.max).Int("evictions", ps.Evictions).
		Msg("too many streams open: the least recently active one is dropped unflushed, its later input ignored until it ends or restarts")
}

// check applies the error policy to a stream's error.
func (ps *PerStream) check(stream string, err error) error {
	if err == nil || ps.drop == nil || ctxErr(err) {
		return err
	}
	ps.drop.Error().Err(err).Str("stream", stream).Msg("stream dropped: its later input is ignored (stream_errors: drop)")
	ps.forget(stream)
	ps.failed[stream] = true
	ps.gone.dropped++
	return nil
}

func ctxErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// Flush flushes every stream still open, in order of first appearance.
func (ps *PerStream) Flush(ctx context.Context, emit tracecast.Emit) error {
	for _, s := range ps.order {
		if p := ps.procs[s]; p != nil {
			if err := ps.check(s, p.Flush(ctx, emit)); err != nil {
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

// EndStream flushes and forgets one stream.
func (ps *PerStream) EndStream(ctx context.Context, stream string, emit tracecast.Emit) error {
	delete(ps.failed, stream)
	delete(ps.evicted, stream)
	p := ps.procs[stream]
	if p == nil {
		return nil
	}
	err := p.Flush(ctx, emit)
	if err == nil { // its metrics as flushed, its gauges kept
		ps.retire(p, true, ps.tick)
		ps.unlist(stream)
	} else {
		ps.forget(stream)
	}
	return ps.check(stream, err)
}

// ResetStream forgets one stream, or all of them for "".
func (ps *PerStream) ResetStream(stream string) {
	if stream == "" {
		for _, s := range ps.order {
			ps.retire(ps.procs[s], false, 0)
		}
		ps.procs, ps.order = map[string]tracecast.Processor{}, nil
		clear(ps.failed)
		clear(ps.evicted)
		clear(ps.used)
		return
	}
	delete(ps.failed, stream)
	delete(ps.evicted, stream)
	ps.forget(stream)
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
