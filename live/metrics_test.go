package live

import (
	"context"
	"fmt"
	"github.com/tracecast/tracecast/internal/promexport"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	kafkago "github.com/segmentio/kafka-go"

	"github.com/tracecast/tracecast/pipelines"
)

// TestBrokerMetrics: `tracecast broker --metrics-addr` serves its topics,
// partitions, messages produced and bytes held, not only Go and process
// metrics; a real scrape after 25 messages to one topic.
func TestBrokerMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	h := &pipelines.Health{}
	maddr, stop, err := promexport.Serve("127.0.0.1:0", reg, h, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	ctx, cancel := context.WithCancel(t.Context())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- ServeBroker(ctx, BrokerOptions{Addr: "127.0.0.1:0", Topics: []string{Topics, "extra:2"}, Partitions: 4,
			MinSessionTimeout: time.Second, Metrics: reg}, zerolog.Nop(), func(addrs []string) { h.Set(true); ready <- addrs[0] })
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	addr := <-ready
	w := &kafkago.Writer{Addr: kafkago.TCP(addr), Topic: "tracecast.traces", Balancer: &kafkago.Hash{}, BatchTimeout: time.Millisecond, RequiredAcks: kafkago.RequireAll}
	var msgs []kafkago.Message
	for i := range 25 {
		msgs = append(msgs, kafkago.Message{Key: fmt.Appendf(nil, "run-%d", i%3), Value: []byte("0123456789")})
	}
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatal(err)
	}
	w.Close()
	resp, err := http.Get("http://" + maddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	body := string(b)
	for _, want := range []string{
		"tracecast_broker_topics 5\n",
		`tracecast_broker_partitions{topic="tracecast.traces"} 4` + "\n",
		`tracecast_broker_partitions{topic="extra"} 2` + "\n",
		`tracecast_broker_messages_total{topic="tracecast.traces"} 25` + "\n",
		`tracecast_broker_messages_total{topic="tracecast.alerts"} 0` + "\n",
		`tracecast_broker_bytes{topic="tracecast.traces"} `,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, `tracecast_broker_bytes{topic="tracecast.traces"} 0`+"\n") {
		t.Error("no bytes held")
	}
}
