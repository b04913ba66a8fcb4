package kafkatest

import (
	"bytes"
	"sync"
)

// LogBuffer is a log destination (zerolog.New(&buf)) safe for the
// goroutines of a broker, a source or a subscriber: what they logged, read
// with String while they run.
type LogBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *LogBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *LogBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
