//go:build unix

// Package fifotest gives tests a named pipe to write an output to and what
// came through it: for the sinks that must write a pipe or a device in
// place rather than rename a temporary file over it.
package fifotest

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/tracecast/tracecast"
)

// Read makes a named pipe in a temporary directory and reads it until
// every writer has closed it; done, called once the writer under test has
// closed it, returns what was read, after checking the pipe is still there
// and no PATH.tmp was left beside it (a writer that renames a temporary
// file over its output replaces the pipe). The test holds a write end
// itself, so that the read neither blocks before the writer opens the pipe
// nor ends if the writer never does.
func Read(t testing.TB) (path string, done func() []byte) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "pipe")
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skip(err)
	}
	r, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	w, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(r)
		r.Close()
		ch <- b
	}()
	return path, func() []byte {
		w.Close()
		b := <-ch
		if fi, err := os.Lstat(path); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
			t.Errorf("the pipe was replaced: %v, %v", fi, err)
		}
		if _, err := os.Stat(path + ".tmp"); err == nil {
			t.Errorf("%s.tmp left behind", path)
		}
		return b
	}
}

// WriteSink writes items through the sink open makes on a named pipe
// (Read's), then closes it — or aborts it (tracecast.Aborter), with abort
// — and returns what came through the pipe. Closing or aborting a pipe is
// no error.
func WriteSink(t testing.TB, open func(path string) (tracecast.Sink, error), items any, abort bool) []byte {
	t.Helper()
	path, done := Read(t)
	s, err := open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Write(t.Context(), tracecast.Batch{Items: items}); err != nil {
		t.Fatal(err)
	}
	if abort {
		err = s.(tracecast.Aborter).Abort()
	} else {
		err = s.Close(t.Context())
	}
	if err != nil {
		t.Errorf("close: %v", err)
	}
	return done()
}
