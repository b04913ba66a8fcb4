package kafka

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	kafkago "github.com/segmentio/kafka-go"
	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/internal/kafkatest"
	"github.com/tracecast/tracecast/sinks/arrow"

	"github.com/apache/arrow/go/v15/arrow/ipc"
)

func TestPublishPredictions(t *testing.T) {
	addr := kafkatest.Start(t, 4, "tracecast.predictions")
	s, err := New(Options{Brokers: []string{addr}, Topic: "tracecast.predictions"})
	if err != nil {
		t.Fatal(err)
	}
	var ps []tracecast.Prediction
	for _, trace := range []string{"a", "b", "c"} {
		for w := int64(1); w <= 5; w++ {
			ps = append(ps, tracecast.Prediction{ID: trace + "/w" + string(rune('0'+w)), Trace: trace, Window: w, Query: "idle>=25%", Likelihood: 0.5})
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := s.Write(ctx, tracecast.Batch{Items: ps}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// Each trace's records are in one partition, in window order.
	part := map[string]int{}
	last := map[string]int64{}
	n := 0
	for p := 0; p < 4; p++ {
		r := kafkago.NewReader(kafkago.ReaderConfig{Brokers: []string{addr}, Topic: "tracecast.predictions", Partition: p, MaxWait: 200 * time.Millisecond})
		conn, err := kafkago.DialLeader(ctx, "tcp", addr, "tracecast.predictions", p)
		if err != nil {
			t.Fatal(err)
		}
		high, err := conn.ReadLastOffset()
		conn.Close()
		if err != nil {
			t.Fatal(err)
		}
		for i := int64(0); i < high; i++ {
			m, err := r.ReadMessage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				Schema string
				ID     string
				Trace  string
				Window int64
			}
			if err := json.Unmarshal(m.Value, &got); err != nil {
				t.Fatal(err)
			}
			if got.Schema != "tracecast.prediction/1" || got.Trace != string(m.Key) {
				t.Fatalf("message %s: %+v", m.Value, got)
			}
			if q, ok := part[got.Trace]; ok && q != p {
				t.Fatalf("trace %s in partitions %d and %d", got.Trace, q, p)
			}
			part[got.Trace] = p
			if got.Window <= last[got.Trace] {
				t.Fatalf("trace %s: window %d after %d", got.Trace, got.Window, last[got.Trace])
			}
			last[got.Trace] = got.Window
			n++
		}
		r.Close()
	}
	if n != len(ps) {
		t.Fatalf("%d messages, want %d", n, len(ps))
	}
}

func TestEncode(t *testing.T) {
	b, err := Encode("tracecast.alert/1", tracecast.Alert{ID: "x", Kind: "regime-change"})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil || m["schema"] != "tracecast.alert/1" || m["id"] != "x" || m["kind"] != "regime-change" {
		t.Fatalf("%s: %v", b, err)
	}
}

// TestArrowMessages: with the arrow format each message is a standalone
// Arrow IPC stream of one trace's records of a batch.
func TestArrowMessages(t *testing.T) {
	addr := kafkatest.Start(t, 1, "p")
	s, err := New(Options{Brokers: []string{addr}, Topic: "p", Format: FormatArrow,
		Tables: []arrow.Table{arrow.StructTable[tracecast.Prediction]("tracecast.prediction/1", nil)}})
	if err != nil {
		t.Fatal(err)
	}
	ps := []tracecast.Prediction{{ID: "a/w1", Trace: "a", Window: 1, Likelihood: 0.25}, {ID: "a/w2", Trace: "a", Window: 2, Likelihood: 0.5},
		{ID: "b/w1", Trace: "b", Window: 1, Likelihood: 1}}
	if err := s.Write(t.Context(), tracecast.Batch{Items: ps}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	r := kafkago.NewReader(kafkago.ReaderConfig{Brokers: []string{addr}, Topic: "p", MaxWait: 200 * time.Millisecond})
	defer r.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	for _, want := range []struct {
		key  string
		rows int64
	}{{"a", 2}, {"b", 1}} {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		hdr := map[string]string{}
		for _, h := range m.Headers {
			hdr[h.Key] = string(h.Value)
		}
		if string(m.Key) != want.key || hdr["schema"] != "tracecast.prediction/1" || hdr["content-type"] != ArrowContentType {
			t.Fatalf("message key %s headers %v", m.Key, hdr)
		}
		ir, err := ipc.NewReader(bytes.NewReader(m.Value))
		if err != nil {
			t.Fatal(err)
		}
		if !ir.Next() || ir.Record().NumRows() != want.rows {
			t.Fatalf("trace %s: not one record batch of %d rows", want.key, want.rows)
		}
		rec := ir.Record()
		col := rec.Schema().FieldIndices("id")
		if len(col) != 1 || rec.Column(col[0]).ValueStr(0) != want.key+"/w1" {
			t.Fatalf("trace %s: ids %v", want.key, rec.Column(col[0]))
		}
		if ir.Next() {
			t.Fatal("more than one record batch")
		}
		ir.Release()
	}
}
