package main

import "github.com/tracecast/tracecast"

// asyncWrite runs write on its own goroutine, so that formatting and writing
// the output overlaps with parsing (two cores instead of one). It returns the
// function to hand batches to (it copies them: the caller reuses its slice)
// and a function that waits for the writer and returns its first error.
func asyncWrite(write func([]tracecast.Entity) error) (func([]tracecast.Entity) error, func() error) {
	const depth = 4
	full := make(chan []tracecast.Entity, depth)
	free := make(chan []tracecast.Entity, depth)
	for range depth {
		free <- nil
	}
	done := make(chan error, 1)
	go func() {
		var err error
		for b := range full {
			if err == nil {
				err = write(b)
			}
			free <- b[:0]
		}
		done <- err
	}()
	var failed error
	send := func(es []tracecast.Entity) error {
		if failed != nil {
			return failed
		}
		b := <-free
		full <- append(b, es...)
		return nil
	}
	wait := func() error {
		close(full)
		failed = <-done
		return failed
	}
	return send, wait
}
