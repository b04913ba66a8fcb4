package kafka

import (
	"bytes"
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
