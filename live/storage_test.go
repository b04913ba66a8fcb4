package live

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	kafkago "github.com/segmentio/kafka-go"

	"github.com/tracecast/tracecast/internal/fulldisk"
	"github.com/tracecast/tracecast/internal/logtest"
)

// TestBrokerStorageFull fills the broker's data directory (a tmpfs as
// root; injected free space otherwise): produce requests are answered
// KAFKA_STORAGE_ERROR naming the cause and the directory — kfake answered
// UNKNOWN_SERVER_ERROR, which clients do not retry, and logged nothing —
// fetches go on, the warning is logged once for 20 refusals, and once
// there is room again produce requests are stored again.
func TestBrokerStorageFull(t *testing.T) {
	var logs logtest.Buffer
	o := BrokerOptions{Addr: "127.0.0.1:0", Partitions: 1, Topics: []string{"t"}, Logger: zerolog.New(&logs)}
	d, mounted := fulldisk.Mount(t, 16<<20)
	var full atomic.Bool
	if mounted {
		o.DataDir = d.Dir
	} else {
		o.DataDir = t.TempDir()
		o.FreeSpace = func(string) (int64, error) {
			if full.Load() {
				return 4096, nil
			}
			return 1 << 30, nil
		}
	}
	c, err := StartBroker(o)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	addr := c.ListenAddrs()[0]
	w := &kafkago.Writer{Addr: kafkago.TCP(addr), Topic: "t", RequiredAcks: kafkago.RequireAll, MaxAttempts: 1, BatchTimeout: time.Millisecond}
	defer w.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := w.WriteMessages(ctx, kafkago.Message{Value: []byte("before")}); err != nil {
		t.Fatal(err)
	}
	if mounted {
		d.Fill()
	} else {
		full.Store(true)
	}
	for i := range 20 {
		err := w.WriteMessages(ctx, kafkago.Message{Value: []byte("while full")})
		if !errors.Is(err, kafkago.KafkaStorageError) {
			var we kafkago.WriteErrors
			if !errors.As(err, &we) || !errors.Is(we[0], kafkago.KafkaStorageError) {
				t.Fatalf("produce %d on a full disk: %v, want [56] Kafka Storage Error", i, err)
			}
		}
	}
	// Reads go on.
	r := kafkago.NewReader(kafkago.ReaderConfig{Brokers: []string{addr}, Topic: "t", MaxWait: 100 * time.Millisecond})
	defer r.Close()
	m, err := r.ReadMessage(ctx)
	if err != nil || string(m.Value) != "before" {
		t.Fatalf("fetch on a full disk: %q, %v", m.Value, err)
	}
	warned := strings.Count(logs.String(), "no space left on device in "+o.DataDir)
	if warned != 1 {
		t.Errorf("%d warnings for 20 refused produce requests, want 1:\n%s", warned, logs.String())
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(NewBrokerCollector(c))
	if v := gathered(t, reg, "tracecast_broker_storage_full"); v != 1 {
		t.Errorf("storage_full %v, want 1", v)
	}
	if v := gathered(t, reg, "tracecast_broker_storage_refused_total"); v < 20 {
		t.Errorf("storage_refused_total %v, want ≥ 20", v)
	}
	// Room again.
	if mounted {
		d.Free()
	} else {
		full.Store(false)
	}
	if err := w.WriteMessages(ctx, kafkago.Message{Value: []byte("after")}); err != nil {
		t.Fatalf("produce once there is room: %v\n%s", err, logs.String())
	}
	if !strings.Contains(logs.String(), "has room again") {
		t.Errorf("no word of the room found again:\n%s", logs.String())
	}
	t.Logf("mounted %v:\n%s", mounted, logs.String())
}

// gathered is the value of the metric named name (without labels).
func gathered(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name || len(mf.GetMetric()) == 0 {
			continue
		}
		m := mf.GetMetric()[0]
		if g := m.GetGauge(); g != nil {
			return g.GetValue()
		}
		return m.GetCounter().GetValue()
	}
	t.Fatalf("no %s", name)
	return 0
}
