package component

import "github.com/tracecast/tracecast"

// FirstPasser is implemented by stages that need to have seen their whole
// input before they process it: Pallipuram et al.'s (2014) automatic sampling period is
// half the shortest time between two changes of the whole signal, and the
// offline signal counts every container from the start. Rather than keep
// the input until its end, such a stage reads it twice.
//
// Before the pipeline starts, the runtime calls FirstPass once, with
// rereadable true when every source upstream of the stage can read its
// input again from the start (a regular file; not standard input, a
// tailed file or Kafka). When it returns a processor, the runtime first
// runs those sources, their parsers and the stages between them and this
// one, feeding that processor (its output is dropped) until the input ends
// and it is flushed; then it runs the pipeline. A stage that cannot work
// without a first pass returns an error when rereadable is false (the
// pipeline does not start); one that needs none returns nil.
type FirstPasser interface {
	FirstPass(rereadable bool) (tracecast.Processor, error)
}

// Rereadable is implemented by sources that can read their input again
// from its start. Reread returns a source that does, once, as fast as it
// can (a paced replay is not paced again); ok is false when the input
// cannot be read twice (standard input, a pipe).
type Rereadable interface {
	Reread() (src tracecast.Source, ok bool)
}
