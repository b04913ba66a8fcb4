//go:build unix

package file

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/tracecast/tracecast"
)

// TestStopWhileNamedPipeBlocks: a named pipe given by path, whose writer
// is silent, stops at once too (a read deadline wakes the polled read).
func TestStopWhileNamedPipeBlocks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	// A writer that never writes, so that the source's open returns and
	// its read blocks.
	w, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	src, err := New(Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- src.Run(ctx, func(context.Context, tracecast.Batch) error { return nil })
	}()
	time.Sleep(50 * time.Millisecond) // let the read block (not needed for the result)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Run: %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run still blocked in a read of the named pipe 10 s after the stop")
	}
}
