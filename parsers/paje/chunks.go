package paje

import (
	"context"

	"github.com/tracecast/tracecast"
)

// chunkQueue is a processor's state when its input is chunks of whole
// lines (tracecast.Chunk, from a file source at full speed): the chunks
// received and not resolved yet, in input order, and spare ones.
//
// With Threads > 1, each chunk received starts tokenizing on a goroutine
// of its own at once, and the processor's goroutine resolves the oldest
// chunks, in order, as soon as more than chunksInFlight(Threads)−1 are
// queued: the tokenizing runs up to that many chunks ahead of the
// resolving, on whichever core is free, and never waits for a group to
// complete. (Tokenizing a group of Threads chunks while the group before
// was resolved, then waiting for both, left one of two cores idle 30% of
// the time on the 41 MB StarPU trace.) A goroutine may outlive a call by
// the time it takes to tokenize its chunk; Flush and a failing call wait
// for them all, and a stream dropped unflushed (component.PerStream) only
// leaves them to finish that chunk. The output is Read's: the same
// entities in the same batches, whatever the number of threads or the
// chunks' sizes.
type chunkQueue struct {
	used   bool     // the stream came as chunks
	queue  []*chunk // received, not resolved, in input order
	spare  []*chunk
	ctx    context.Context
	emit   tracecast.Emit
	sendFn func(int) error
	err    error // the first error of emit
	// work holds the chunks to tokenize, oldest first. A goroutine
	// started for a chunk tokenizes the oldest one waiting, whichever
	// goroutine runs first: the scheduler runs the newest goroutine
	// first, which left the chunk the resolver waited for to the last.
	work chan *chunk
}

// chunks queues cs and resolves what falls outside the tokenizing window.
func (pr *processor) chunks(ctx context.Context, cs []tracecast.Chunk, emit tracecast.Emit) error {
	q, p := &pr.cq, pr.p
	if !q.used {
		if p.stats.Lines > 0 {
			return p.bad(p.stats.Lines, "input", "chunks after lines")
		}
		pr.startChunks()
	}
	q.ctx, q.emit = ctx, emit
	defer func() { q.ctx, q.emit = nil, nil }()
	for i := range cs {
		c := q.get()
		c.Data, c.First, c.TooLong, c.release = cs[i].Data, cs[i].First, false, cs[i].Release
		q.queue = append(q.queue, c)
		window := chunksInFlight(p.opts.Threads) - 1
		if window == 0 || p.stats.Events == 0 {
			// In order, on this goroutine: with one thread, and
			// until the first event line, as the header's event
			// definitions are not all known before (chunks
			// tokenized ahead could not decode their lines, and
			// the resolver would decode them itself).
			c.tokenize(p.opts.MaxLineBytes, p.hdr.snap.Load())
			c.done <- struct{}{}
			window = 0
		} else {
			q.work <- c
			go func() {
				c := <-q.work
				c.tokenize(p.opts.MaxLineBytes, p.hdr.snap.Load())
				c.done <- struct{}{}
			}()
		}
		// Resolved as soon as it falls outside the window, not after
		// the whole batch is queued: a batch of many chunks (a source
		// may hand thousands of small ones at once) would otherwise
		// make a chunk, with its arrays, for every one of them.
		if err := pr.resolveBeyond(window); err != nil {
			return err
		}
	}
	return nil
}

// resolveBeyond resolves the oldest queued chunks, in order, waiting for
// their tokenizing, until at most window are left. After an error it
// waits for the others too and drops them: no goroutine is left behind.
func (pr *processor) resolveBeyond(window int) error {
	q, p := &pr.cq, pr.p
	for len(q.queue) > window {
		c := q.queue[0]
		<-c.done
		q.queue = q.queue[:copy(q.queue, q.queue[1:])]
		err := p.chunk(c, q.sendFn)
		q.put(c)
		if err != nil {
			for _, c := range q.queue {
				<-c.done
				q.put(c)
			}
			q.queue = q.queue[:0]
			return err
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
	q.work = make(chan *chunk, chunksInFlight(p.opts.Threads))
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
	b := pr.batch(es)
	b.Recycle = func() { p.recycle(es) }
	return pr.cq.emit(pr.cq.ctx, b)
}

// entityPool is how many entity batches given back a parser keeps for
// reuse: enough to absorb the jitter between it and its sink (the edge
// between them holds the batches in flight) and in pj_dump's window,
// which holds 4 to 10 batches of the StarPU trace. A batch dropped when
// the pool is full is garbage, and another one is made when it runs dry:
// with 8, the collector ran 7-8 times on the 420 MB trace and the peak
// RSS was 52-54 MiB; with 16, 5-6 times and 47-49 MiB.
const entityPool = 16

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
	err := pr.resolveBeyond(0)
	if err == nil {
		err = p.Finish()
	}
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
