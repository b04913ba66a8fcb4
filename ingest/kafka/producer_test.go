package kafka

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	kafkago "github.com/segmentio/kafka-go"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/internal/kafkatest"
)

// TestProducerNeverLosesLinesSilently: a message the broker refuses (here
// larger than its maximum message size) is an error of Lines, whatever the
// writer's acks. A writer that asks for no acknowledgement (kafka-go's
// zero RequiredAcks) cannot know, so the Producer refuses it: the fault
// suite once lost every trace's first chunk that way, and the source then
// (rightly) skipped the traces as "begun before the start position".
func TestProducerNeverLosesLinesSilently(t *testing.T) {
	addr := kafkatest.Start(t, 1, "lines")
	big := []tracecast.Line{{Data: bytes.Repeat([]byte("x"), 2<<20)}} // > kfake's 1 MiB message.max.bytes
	for _, c := range []struct {
		name string
		acks kafkago.RequiredAcks
		want string
	}{
		{"no acks", kafkago.RequireNone, "RequiredAcks"},
		{"leader ack", kafkago.RequireOne, "Message Size Too Large"},
		{"all acks", kafkago.RequireAll, "Message Size Too Large"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := &kafkago.Writer{Addr: kafkago.TCP(addr), Topic: "lines", Balancer: &kafkago.Hash{}, BatchTimeout: time.Millisecond,
				BatchBytes: 8 << 20, RequiredAcks: c.acks, MaxAttempts: 1}
			defer w.Close()
			p := &Producer{W: w, Trace: "t"}
			err := p.Lines(t.Context(), big)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Lines: %v, want an error mentioning %q", err, c.want)
			}
			if err := p.End(t.Context()); c.acks == kafkago.RequireNone && err == nil {
				t.Fatal("End with a writer without acks: no error")
			}
		})
	}
}

// TestProducerWaitsForBrokerRestart: a broker down for longer than the
// writer's own retries is waited for; Lines failed before, and `tracecast
// publish` exited 1 when a broker restart took more than a few seconds
// (the fault suite with the broker down 10 s).
func TestProducerWaitsForBrokerRestart(t *testing.T) {
	t.Parallel()
	b := kafkatest.StartRestartable(t, 1, "lines")
	w := &kafkago.Writer{Addr: kafkago.TCP(b.Addr), Topic: "lines", Balancer: &kafkago.Hash{}, BatchTimeout: time.Millisecond,
		RequiredAcks: kafkago.RequireAll, MaxAttempts: 1}
	defer w.Close()
	p := &Producer{W: w, Trace: "t"}
	if err := p.Lines(t.Context(), []tracecast.Line{{Data: []byte("%a")}}); err != nil {
		t.Fatal(err)
	}
	b.Stop()
	restarted := make(chan bool)
	time.AfterFunc(2*time.Second, func() { b.Start(); close(restarted) })
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	err := p.Lines(ctx, []tracecast.Line{{Data: []byte("1 b")}})
	<-restarted
	if err != nil {
		t.Fatalf("Lines gave up while the broker restarted: %v", err)
	}
	// A stop while the broker is down ends the wait with the stop's error.
	b.Stop()
	stop, cancelStop := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancelStop()
	if err := p.Lines(stop, []tracecast.Line{{Data: []byte("1 c")}}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Lines stopped while the broker was down: %v, want the stop's error", err)
	}
}

// TestProducerWritesOneBatchAtATime: Lines hands the writer at most one
// batch at a time, so that a failed batch never leaves a later one on the
// topic (a retry then repeats lines, which the Source drops, instead of
// reordering them).
func TestProducerWritesOneBatchAtATime(t *testing.T) {
	msgs := func(n, size int) []kafkago.Message {
		m := make([]kafkago.Message, n)
		for i := range m {
			m[i].Value = make([]byte, size)
		}
		return m
	}
	for _, c := range []struct {
		name       string
		w          *kafkago.Writer
		msgs       []kafkago.Message
		wantBatch  int
		wantWrites int
	}{
		{"kafka-go defaults: 100 messages", &kafkago.Writer{}, msgs(250, 10), 100, 3},
		{"half of BatchBytes", &kafkago.Writer{BatchBytes: 10000}, msgs(20, 1000), 4, 5},
		{"one larger than a batch goes alone", &kafkago.Writer{BatchBytes: 1000}, msgs(3, 5000), 1, 3},
		{"BatchSize", &kafkago.Writer{BatchSize: 7}, msgs(7, 1), 7, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := &Producer{W: c.w}
			writes := 0
			for m := c.msgs; len(m) > 0; writes++ {
				n := p.oneBatch(m)
				if writes == 0 && n != c.wantBatch {
					t.Fatalf("first batch %d messages, want %d", n, c.wantBatch)
				}
				m = m[n:]
			}
			if writes != c.wantWrites {
				t.Fatalf("%d writes, want %d", writes, c.wantWrites)
			}
		})
	}
}
