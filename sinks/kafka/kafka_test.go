package kafka

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"strconv"
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
				Record string
				ID     string
				Trace  string
				Window int64
			}
			if err := json.Unmarshal(m.Value, &got); err != nil {
				t.Fatal(err)
			}
			if got.Schema != "tracecast.prediction/1" || got.Record != "prediction" || got.Trace != string(m.Key) {
				t.Fatalf("message %s: %+v", m.Value, got)
			}
			// JSON messages say what they are in their headers too.
			if hdr := headers(m); hdr["record"] != "prediction" || hdr["schema"] != "tracecast.prediction/1" || hdr["content-type"] != "application/json" {
				t.Fatalf("message %s: headers %v", m.Value, hdr)
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

// TestEncode: a message value is "schema" then the record's JSON-lines
// object, "record" first, without HTML escaping (a query "idle>=25%" was
// published as "idle\u003e=25%", even from a record's own MarshalJSON).
func TestEncode(t *testing.T) {
	tests := []struct {
		name, schema string
		rec          any
		want         string
	}{
		{"alert", "tracecast.alert/1", tracecast.Alert{ID: "x", Trace: "t", Kind: "idle-opportunity", Query: "idle>=25%"},
			`{"schema":"tracecast.alert/1","record":"alert","id":"x","trace":"t","window":0,"kind":"idle-opportunity","query":"idle>=25%","value":0,"threshold":0,"start":0,"end":0,"message":"","emitted_at":null}`},
		{"forecast", "tracecast.forecast/1", tracecast.Forecast{ID: "r/idle>=25%/10ms/0", Run: "r", Query: "idle>=25%", Lo: math.NaN(), Hi: 1},
			`{"schema":"tracecast.forecast/1","record":"forecast","id":"r/idle>=25%/10ms/0","run":"r","class":"","query":"idle>=25%","threshold":0,"workers":0,"issued_at":0,"horizon":0,"p":0,"mean":0,"worker_seconds":0,"lo":null,"hi":1,"method":""}`},
		{"entity", "tracecast.entity/1", tracecast.Entity{Nature: tracecast.NatureState, Container: "w0", Type: "S", Start: 1, End: 2, Value: "a<b"},
			`{"schema":"tracecast.entity/1","record":"entity","nature":"State","container":"w0","type":"S","start":1,"end":2,"duration":1,"imbrication":0,"value":"a<b"}`},
		{"window not compared", "tracecast.window/1", tracecast.Window{Trace: "t", Class: "idle", N: 10},
			`{"schema":"tracecast.window/1","record":"window","trace":"t","class":"idle","index":0,"start":0,"end":0,"n":10,"d":null,"p":null,"hit":null,"compared":false}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := Encode(tt.schema, tt.rec)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tt.want {
				t.Errorf("got\n%s\nwant\n%s", b, tt.want)
			}
		})
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
		hdr := headers(m)
		if string(m.Key) != want.key || hdr["record"] != "prediction" || hdr["schema"] != "tracecast.prediction/1" || hdr["content-type"] != ArrowContentType {
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

// headers returns a message's headers by key.
func headers(m kafkago.Message) map[string]string {
	hdr := map[string]string{}
	for _, h := range m.Headers {
		hdr[h.Key] = string(h.Value)
	}
	return hdr
}

// TestGatherThenFlush: Write gathers (a tracecast.Flusher), Flush sends
// everything gathered, and so does Write once MaxPending messages wait.
func TestGatherThenFlush(t *testing.T) {
	addr := kafkatest.Start(t, 1, "p")
	s, err := New(Options{Brokers: []string{addr}, Topic: "p"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(t.Context())
	size := func() int64 { return kafkatest.EndOffset(t.Context(), t, addr, "p", 0) }
	batch := func(n int) tracecast.Batch {
		ps := make([]tracecast.Prediction, n)
		for i := range ps {
			ps[i] = tracecast.Prediction{ID: "a/" + strconv.Itoa(i), Trace: "a", Window: int64(i)}
		}
		return tracecast.Batch{Items: ps}
	}
	for range 3 {
		if err := s.Write(t.Context(), batch(10)); err != nil {
			t.Fatal(err)
		}
	}
	if n := size(); n != 0 {
		t.Fatalf("%d messages sent before Flush", n)
	}
	if err := s.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := size(); n != 30 {
		t.Fatalf("%d messages after Flush, want 30", n)
	}
	if err := s.Write(t.Context(), batch(MaxPending)); err != nil {
		t.Fatal(err)
	}
	if n := size(); n != 30+MaxPending {
		t.Fatalf("%d messages after a write of MaxPending, want %d", n, 30+MaxPending)
	}
}

// TestFlushWaitsForBrokerRestart: a broker down for longer than kafka-go's
// own retries (about ten attempts, a few seconds) is waited for; Flush
// failed before, and the pipeline stopped with it.
func TestFlushWaitsForBrokerRestart(t *testing.T) {
	b := kafkatest.StartRestartable(t, 1, "p")
	addr := b.Addr
	s, err := New(Options{Brokers: []string{addr}, Topic: "p"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(t.Context())
	write := func(id string) {
		b := tracecast.Batch{Items: []tracecast.Prediction{{ID: id, Trace: "a"}}}
		if err := s.Write(t.Context(), b); err != nil {
			t.Fatal(err)
		}
	}
	write("a/0")
	if err := s.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	b.Stop()
	restarted := make(chan bool)
	time.AfterFunc(8*time.Second, func() { b.Start(); close(restarted) })
	write("a/1")
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	flushed := make(chan error, 1)
	go func() { flushed <- s.Flush(ctx) }()
	// The outage is told from the first failure (/readyz, the metrics), not
	// once kafka-go's own attempts ran out: they hid most of a 10 s outage.
	deadline := time.Now().Add(3 * time.Second)
	for s.Unready() == "" && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if s.Unready() == "" {
		t.Error("the broker is down, the sink still says it is ready 3 s later")
	}
	err = <-flushed
	<-restarted
	if err != nil {
		t.Fatalf("Flush gave up while the broker restarted: %v", err)
	}
	conn, err := kafkago.DialLeader(t.Context(), "tcp", addr, "p", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if n, err := conn.ReadLastOffset(); err != nil || n < 1 {
		t.Fatalf("the restarted broker holds %d messages (%v), want the one flushed", n, err)
	}
}
