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
