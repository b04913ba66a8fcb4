// Package kafkatest starts a real Kafka-protocol broker (franz-go's kfake)
// in-process for tests: one per test, on a random loopback port, with the
// topics created before any client starts.
package kafkatest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	kafkago "github.com/segmentio/kafka-go"

	"github.com/twmb/franz-go/pkg/kfake"
)

// Start runs a broker for the test and returns its address.
func Start(t testing.TB, partitions int32, topics ...string) string {
	t.Helper()
	c, err := kfake.NewCluster(
		kfake.NumBrokers(1),
		kfake.SeedTopics(partitions, topics...),
		kfake.GroupMinSessionTimeout(time.Second),
	)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c.ListenAddrs()[0]
}

// Normalize returns a record's id and its JSON without the fields that
// depend on how it was delivered (schema, record, emitted_at).
func Normalize(rec map[string]any) (string, string) {
	delete(rec, "schema")
	delete(rec, "record")
	delete(rec, "emitted_at")
	b, _ := json.Marshal(rec)
	id, _ := rec["id"].(string)
	return id, string(b)
}

// ReadRecords reads every message of topic with the given schema until it
// has want distinct ids (or the deadline): id -> Normalize'd JSON, and the
// number of messages (duplicates included). A duplicate that differs from
// the first message with its id fails the test.
func ReadRecords(t testing.TB, addr, topic, schema string, want int, deadline time.Duration) (map[string]string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), deadline)
	defer cancel()
	got := map[string]string{}
	msgs := 0
	conn, err := kafkago.DialContext(ctx, "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	parts, err := conn.ReadPartitions(topic)
	conn.Close()
	if err != nil {
		t.Fatal(err)
	}
	for len(got) < want && ctx.Err() == nil {
		for _, p := range parts {
			r := kafkago.NewReader(kafkago.ReaderConfig{Brokers: []string{addr}, Topic: topic, Partition: p.ID, MaxWait: 100 * time.Millisecond})
			for {
				rctx, rcancel := context.WithTimeout(ctx, 300*time.Millisecond)
				m, err := r.ReadMessage(rctx)
				rcancel()
				if err != nil {
					break
				}
				var rec map[string]any
				if err := json.Unmarshal(m.Value, &rec); err != nil {
					t.Fatalf("%s: %v", m.Value, err)
				}
				if rec["schema"] != schema {
					continue
				}
				msgs++
				id, b := Normalize(rec)
				if prev, ok := got[id]; ok && prev != b {
					t.Fatalf("duplicate %s differs:\n%s\n%s", id, prev, b)
				}
				got[id] = b
			}
			r.Close()
		}
	}
	return got, msgs
}

// CompareRecords fails the test unless got and want hold the same ids with
// the same records.
func CompareRecords(t testing.TB, got, want map[string]string) {
	t.Helper()
	missing := 0
	for id, w := range want {
		g, ok := got[id]
		switch {
		case !ok:
			missing++
			if missing <= 5 {
				t.Errorf("missing %s", id)
			}
		case g != w:
			t.Errorf("%s:\n got %s\nwant %s", id, g, w)
		}
	}
	for id := range got {
		if _, ok := want[id]; !ok {
			t.Errorf("unexpected prediction %s", id)
		}
	}
	if missing > 0 {
		t.Errorf("%d of %d predictions missing", missing, len(want))
	}
}
