package pipelines

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	kafkago "github.com/segmentio/kafka-go"
	"github.com/tracecast/tracecast/internal/kafkatest"
)

// TestPredictionsToKafka runs the prediction phase with a kafka sink on a
// real (in-process) broker and reads the predictions back: one message per
// prediction, keyed by trace, with the versioned schema.
func TestPredictionsToKafka(t *testing.T) {
	addr := kafkatest.Start(t, 4, "tracecast.predictions", "tracecast.alerts")
	dir := t.TempDir()
	yaml := fmt.Sprintf(`version: 1
name: kafka
settings: {status_interval: 0s}
sources:
  trace: {type: file, path: %q, parser: {type: paje}}
stages:
  idle: {type: predict, inputs: [trace], rules: starpu, period: 1, window: 100, queries: ["idle>=50%%"]}
sinks:
  predictions: {type: kafka, inputs: [idle], records: predictions, brokers: [%q], topic: tracecast.predictions}
  alerts: {type: kafka, inputs: [idle], records: alerts, brokers: [%q], topic: tracecast.alerts}
  local: {type: jsonl, inputs: [idle], records: predictions, path: %q}
`, filepath.Join("testdata", "starpu-cholesky-2cpu.trace.gz"), addr, addr, filepath.Join(dir, "p.jsonl"))
	cfg, err := Parse([]byte(yaml), "kafka.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := Run(t.Context(), cfg, RunOptions{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ids := map[string]bool{}
	for p := 0; p < 4; p++ {
		conn, err := kafkago.DialLeader(ctx, "tcp", addr, "tracecast.predictions", p)
		if err != nil {
			t.Fatal(err)
		}
		high, _ := conn.ReadLastOffset()
		conn.Close()
		r := kafkago.NewReader(kafkago.ReaderConfig{Brokers: []string{addr}, Topic: "tracecast.predictions", Partition: p, MaxWait: 200 * time.Millisecond})
		for i := int64(0); i < high; i++ {
			m, err := r.ReadMessage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var rec struct{ Schema, ID, Trace string }
			if err := json.Unmarshal(m.Value, &rec); err != nil || rec.Schema != "tracecast.prediction/1" || string(m.Key) != rec.Trace {
				t.Fatalf("%s: %v", m.Value, err)
			}
			ids[rec.ID] = true
		}
		r.Close()
	}
	if len(ids) != 69 {
		t.Fatalf("%d distinct predictions on the topic, want 69 (one per window after the first)", len(ids))
	}
}
