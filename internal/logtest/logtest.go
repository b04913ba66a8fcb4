// Package logtest gives tests a log destination safe for concurrent
// writers (a broker's, a source's or a pipeline's goroutines): what they
// logged, read while they run.
package logtest

import (
	"bytes"
	"sync"
)

// Buffer is a log destination (zerolog.New(&buf)) that goroutines may
// write while the test reads it with String.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *Buffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
