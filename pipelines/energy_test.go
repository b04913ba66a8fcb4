package pipelines

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/tracecast/tracecast/internal/kafkatest"
)

// TestEnergyStage: the energy stage joins the demo trace's states with its
// power stream, read from a file or from a Kafka topic (published as
// `tracecast publish` does), and finds the energy `tracecast energy` finds
// (865.075 J, checked in cmd/tracecast).
func TestEnergyStage(t *testing.T) {
	root, _ := filepath.Abs("..")
	trace := filepath.Join(root, DemoTracePath)
	pw := filepath.Join(root, "testdata", "power", "cholesky-2cpu.watts.csv.gz")
	for _, viaKafka := range []bool{false, true} {
		t.Run(fmt.Sprintf("kafka=%v", viaKafka), func(t *testing.T) {
			source := fmt.Sprintf(`{type: file, path: %q, parser: {type: power}}`, pw)
			ctx := t.Context()
			if viaKafka {
				addr := kafkatest.Start(t, 2, "power")
				publishTraces(t, addr, "power", map[string][]byte{"node0-power": gunzipFile(t, pw)})
				source = fmt.Sprintf(`{type: kafka, brokers: [%q], topic: power, group: energy, session_timeout: 2s, parser: {type: power}}`, addr)
				// A Kafka source never ends: the energy is integrated when
				// the pipeline is stopped.
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, 3*time.Second)
				defer cancel()
			}
			out := filepath.Join(t.TempDir(), "energy.jsonl")
			cfg, err := Parse(fmt.Appendf(nil, `version: 1
name: energy
settings: {status_interval: 0s}
sources:
  trace: {type: file, path: %q, parser: {type: paje}}
  power: %s
stages:
  e: {type: energy, inputs: [trace, power], window: 0.1, max_gap: 0.1}
sinks:
  rows: {type: jsonl, inputs: [e], records: energy, path: %q}
`, trace, source, out), "energy.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if err := Run(ctx, cfg, RunOptions{}); err != nil {
				t.Fatal(err)
			}
			total, windows := 0.0, 0
			for _, r := range readJSONL(t, out) {
				if r["window"].(float64) == -1 {
					total += r["energy_j"].(float64)
				} else {
					windows++
				}
			}
			if math.Abs(total-865.075) > 5e-4 || windows == 0 {
				t.Fatalf("total %.4f J over %d window rows, want 865.075 J", total, windows)
			}
		})
	}
}
