package paje

import (
	"context"
	"sync"

	"github.com/tracecast/tracecast"
)

// chunkQueue is a processor's state when its input is chunks of whole
// lines (tracecast.Chunk, from a file source at full speed): the chunks
// received but not tokenized yet, and those tokenized but not resolved.
//
// Each Process call tokenizes a group of Threads chunks, one goroutine
// each, while its own goroutine resolves the group before, in order; it
// returns once both are done, so that no goroutine outlives a call (a
// stream dropped by component.PerStream leaves none behind). The output
// is Read's: the same entities in the same batches, whatever the number
// of threads or the chunks' sizes.
type chunkQueue struct {
	used   bool     // the stream came as chunks
	queue  []*chunk // received, not tokenized
	ready  []*chunk // tokenized, not resolved
	spare  []*chunk
	ctx    context.Context
	emit   tracecast.Emit
	sendFn func(int) error
	err    error // the first error of emit
}

// chunks queues cs and tokenizes and resolves what makes whole groups.
func (pr *processor) chunks(ctx context.Context, cs []tracecast.Chunk, emit tracecast.Emit) error {
	q := &pr.cq
	if !q.used {
		if pr.p.stats.Lines > 0 {
			return pr.p.bad(pr.p.stats.Lines, "input", "chunks after lines")
		}
		pr.startChunks()
	}
	q.ctx, q.emit = ctx, emit
	defer func() { q.ctx, q.emit = nil, nil }()
	// A group is tokenized as soon as it is complete, not after the
	// whole batch is queued: a batch of many chunks (a source may hand
	// thousands of small ones at once) would otherwise make a chunk,
	// with its arrays, for every one of them.
	threads := pr.p.opts.Threads
	for i := range cs {
		c := q.get()
		c.Data, c.First, c.TooLong, c.release = cs[i].Data, cs[i].First, false, cs[i].Release
		q.queue = append(q.queue, c)
		if len(q.queue) >= threads {
			if err := pr.step(threads); err != nil {
				return err
			}
		}
	}
	return nil
}

// startChunks sets the parser up as Read does: entities go out once a
// batch's worth is complete, after every line and while a container's
// destruction or the end completes many; the batches are handed
// downstream, not copied.
func (pr *processor) startChunks() {
	q, p := &pr.cq, pr.p
	q.used = true
	p.own = true
	p.pool = make(chan []tracecast.Entity, entityPool)
	q.sendFn = func(min int) error {
		if q.err == nil {
			q.err = p.send(min, pr.emitOwned)
		}
		return q.err
	}
	p.sim.drain = func() error { return q.sendFn(BatchSize) }
}

// emitOwned emits entities the parser no longer uses (Parser.own).
func (pr *processor) emitOwned(es []tracecast.Entity) error {
	if len(es) == 0 {
		return nil
	}
	p := pr.p
	if pr.meta == nil && p.unit != "" {
		pr.meta = map[string]string{"time_unit": p.unit}
	}
	wm, twm := pr.watermarks(len(es))
	return pr.cq.emit(pr.cq.ctx, tracecast.Batch{Stream: pr.stream, Items: es, Watermark: wm, TypeWatermarks: twm, Meta: pr.meta,
		Recycle: func() { p.recycle(es) }})
}

// entityPool is how many entity batches given back a parser keeps for
// reuse: enough to absorb the jitter between it and its sink (the edge
// between them holds the batches in flight) and in pj_dump's window,
// which holds 4 to 10 batches of the StarPU trace. A batch dropped when
// the pool is full is garbage, and another one is made when it runs dry:
// with 8, the collector ran 7-8 times on the 420 MB trace and the peak
// RSS was 52-54 MiB; with 16, 5-6 times and 47-49 MiB.
const entityPool = 16

// step tokenizes the first n queued chunks, in parallel, while this
// goroutine resolves the ready ones; then the tokenized ones are ready.
func (pr *processor) step(n int) error {
	q, p := &pr.cq, pr.p
	group := q.queue[:n]
	snap := p.hdr.snap.Load()
	var wg sync.WaitGroup
	if pr.p.opts.Threads > 1 {
		for _, c := range group {
			wg.Go(func() { c.tokenize(p.opts.MaxLineBytes, snap) })
		}
	} else {
		// One thread: in order, on this goroutine; the definitions
		// of the chunks before are known by then.
		err := pr.resolveReady()
		for _, c := range group {
			c.tokenize(p.opts.MaxLineBytes, p.hdr.snap.Load())
			q.ready = append(q.ready, c)
			if err == nil {
				err = pr.resolveReady()
			}
		}
		q.queue = q.queue[:copy(q.queue, q.queue[n:])]
		return err
	}
	err := pr.resolveReady()
	wg.Wait()
	q.ready = append(q.ready, group...)
	q.queue = q.queue[:copy(q.queue, q.queue[n:])]
	return err
}

// resolveReady resolves the tokenized chunks in order and gives their
// buffers back.
func (pr *processor) resolveReady() error {
	q, p := &pr.cq, pr.p
	var err error
	for _, c := range q.ready {
		if err == nil {
			err = p.chunk(c, q.sendFn)
		}
		q.put(c)
	}
	clear(q.ready)
	q.ready = q.ready[:0]
	return err
}

// flushChunks resolves what is queued, ends the trace and emits the rest.
func (pr *processor) flushChunks(ctx context.Context, emit tracecast.Emit) error {
	q, p := &pr.cq, pr.p
	q.ctx, q.emit = ctx, emit
	defer func() {
		q.ctx, q.emit = nil, nil
		// The spare chunks' tokens still point into the source's
		// buffers: let those go with the stream.
		for _, c := range q.spare {
			clear(c.toks[:cap(c.toks)])
		}
	}()
	for len(q.queue) > 0 || len(q.ready) > 0 {
		if err := pr.step(min(len(q.queue), p.opts.Threads)); err != nil {
			return err
		}
	}
	err := p.Finish()
	if err == nil {
		err = q.sendFn(1)
	}
	if err != nil {
		return err
	}
	if pr.report != nil {
		pr.report(p.Stats())
	}
	return nil
}

// get returns a chunk to fill, reused if possible.
func (q *chunkQueue) get() *chunk {
	if n := len(q.spare); n > 0 {
		c := q.spare[n-1]
		q.spare = q.spare[:n-1]
		return c
	}
	return newChunk()
}

// put gives a resolved chunk's data back to its source and keeps the
// chunk (its token and line slices) for reuse. Its tokens are not
// cleared: the next chunk's overwrite them, and until then they only keep
// alive buffers the source made, which its pool holds anyway (it makes
// one only when the pool is empty); flushChunks clears them at the end of
// the stream. Clearing them here zeroed 270 KiB a chunk on the goroutine
// that resolves, the one that must run in order.
func (q *chunkQueue) put(c *chunk) {
	if c.release != nil {
		c.release()
	}
	c.Data, c.Buf, c.release = nil, nil, nil
	q.spare = append(q.spare, c)
}
