package output

import (
	"context"
	"fmt"
)

// Sink is what the sinks that write their output as it comes (csv, jsonl,
// pjdump: a line at a time, flushed after each batch) share: embedded in
// one, it opens its file and gives it Close, Abort and DurableOnClose.
type Sink struct {
	what   string // "csv sink", for errors
	file   *File
	flush  func() error
	closed bool
}

// OpenSink opens path with o for the sink what ("csv sink"); flush, which
// the sink sets with SetFlush, writes what it still holds before Close
// commits the file.
func OpenSink(what, path string, o Options) (*Sink, error) {
	f, err := Open(path, o)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return &Sink{what: what, file: f, flush: func() error { return nil }}, nil
}

// SetFlush sets what Close calls before it commits the file: the sink's
// writers' flush (and what an output that received nothing needs).
func (s *Sink) SetFlush(flush func() error) { s.flush = flush }

// File is the output the sink writes.
func (s *Sink) File() *File { return s.file }

// Name is the output's name for messages.
func (s *Sink) Name() string { return s.file.Name() }

// CheckOpen returns the error of a Write after Close or Abort, nil before.
func (s *Sink) CheckOpen() error {
	if s.closed {
		return fmt.Errorf("%s %s: write after close", s.what, s.file.Name())
	}
	return nil
}

// Annotate is Annotate for a write error of the sink; nil stays nil.
func (s *Sink) Annotate(err error) error {
	if err == nil {
		return nil
	}
	return Annotate(s.what, s.file.Name(), err)
}

// DurableOnClose: a file written as PATH.tmp is durable once renamed, by
// Close (tracecast.CloseDurable).
func (s *Sink) DurableOnClose() bool { return s.file.Temp() }

// Abort removes PATH.tmp (tracecast.Aborter), leaving PATH as it was; an
// output written in place (standard output, a pipe, a live pipeline's
// file) is closed instead, keeping what was written: a prefix of the
// whole output.
func (s *Sink) Abort() error {
	return AbortSink(s.file, &s.closed, func() error { return s.Close(context.Background()) })
}

// Close flushes the sink and renames PATH.tmp to PATH (standard output is
// not closed); on an error PATH.tmp is removed. Calling it again does
// nothing.
func (s *Sink) Close(context.Context) error {
	if s.closed {
		return nil
	}
	s.closed = true
	return Finish(s.file, true, s.what, s.file.Name(), s.flush())
}
