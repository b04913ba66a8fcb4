package pipelines

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	kafkago "github.com/segmentio/kafka-go"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/app/builtin"
	"github.com/tracecast/tracecast/internal/kafkatest"
	"github.com/tracecast/tracecast/internal/schematest"
	"github.com/tracecast/tracecast/pipelines/component"
	"github.com/tracecast/tracecast/stats/ks"
	"github.com/tracecast/tracecast/study"
)

// TestRecordsMatchTheirSchemas runs real pipelines on the traces, power
// streams and I/O-call logs of testdata/ — every record type tracecast
// emits — into JSON lines and into Kafka (JSON messages), and validates
// every record against the JSON Schema its "record" field names
// (docs/schemas/). Kafka messages must also say their record type, schema
// and content type in their headers.
func TestRecordsMatchTheirSchemas(t *testing.T) {
	schemas := schematest.Load(t)
	addr := kafkatest.Start(t, 2, "records")
	dir := t.TempDir()
	root := ".."
	starpu := filepath.Join("testdata", "starpu-cholesky-2cpu.trace.gz")
	pipelines := []struct{ name, yaml string }{
		{"starpu", fmt.Sprintf(`
sources:
  trace: {type: file, path: %q, parser: {type: paje, time_unit: ms, user_defined: true}}
  power: {type: file, path: %q, parser: {type: power, format: rapl}}
stages:
  idle: {type: predict, inputs: [trace], rules: starpu, class: idle, period: 1, window: 100, queries: ["idle>=50%%", "idle>=100%%", "compute>=100%%"], time_unit: ms}
  fc: {type: forecast, inputs: [trace], rules: starpu, queries: ["idle>=50%%"], horizons: [100ms], skill_every: 1s, time_unit: ms}
  sig: {type: signal, inputs: [trace], rules: starpu, class: idle, period: 1}
  energy: {type: energy, inputs: [trace, power], window: 0.5}
  tk: {type: tasks, inputs: [trace, power], energy: true}
  tm: {type: taskmodel, inputs: [tk], model: %q}
  bf: {type: backfill, inputs: [trace], rules: starpu, tasks: [1ms], mode: kill, alphas: [1], policies: [greedy, forecast], spells: [1ms], every: 50ms, time_unit: ms}
sinks:
  out: {type: jsonl, inputs: [trace, idle, fc, sig, energy, power, tm, bf], path: OUT}
  kafka: {type: kafka, inputs: [idle, fc, energy, tm], brokers: [%q], topic: records}
`, starpu, filepath.Join(root, "testdata", "power", "cholesky-2cpu.rapl.csv.gz"), filepath.Join(root, "testdata", "tasks", "cholesky-2cpu.duration.model.json"), addr)},
		{"smpi", fmt.Sprintf(`
sources:
  trace: {type: file, path: %q, parser: {type: paje}}
  power: {type: file, path: %q, parser: {type: power, format: csv}}
stages:
  idle: {type: predict, inputs: [trace], rules: smpi, class: idle, period: 0.0001, window: 20, queries: ["idle>=25%%"]}
  fc: {type: forecast, inputs: [trace], queries: ["idle>=25%%"], horizons: [10ms], every: 5ms, explain: true}
sinks:
  out: {type: jsonl, inputs: [trace, idle, fc, power], path: OUT}
`, filepath.Join(root, "testdata", "smpi", "dynfarm-16.trace.gz"), filepath.Join(root, "testdata", "power", "cholesky-2cpu.watts.csv.gz"))},
		{"io", fmt.Sprintf(`
sources:
  calls: {type: file, path: %q, parser: {type: iocall, format: strace}}
stages:
  busy: {type: iotime, inputs: [calls]}
sinks:
  out: {type: jsonl, inputs: [calls, busy], path: OUT}
`, filepath.Join(root, "testdata", "iocall", "cp_tt_y.strace"))},
	}
	seen := map[string]int{}
	for _, p := range pipelines {
		t.Run(p.name, func(t *testing.T) {
			out := filepath.Join(dir, p.name+".jsonl")
			yaml := fmt.Sprintf("version: 1\nname: %s\nsettings: {status_interval: 0s}\n", p.name) + strings.Replace(p.yaml, "OUT", strconv.Quote(out), 1)
			cfg, err := Parse([]byte(yaml), p.name+".yaml")
			if err != nil {
				t.Fatal(err)
			}
			if err := Run(t.Context(), cfg, RunOptions{}); err != nil {
				t.Fatal(err)
			}
			counts := schemas.ValidateFile(t, out)
			t.Logf("%s: %v", p.name, counts)
			for k, n := range counts {
				seen[k] += n
			}
		})
	}
	// The study's records, written by the code the hitrate and ks commands
	// run: the hit-rate sweep as the sink of a signal stage (a window size
	// that is never compared has a null hit_rate), a KS test.
	t.Run("study", func(t *testing.T) {
		out := filepath.Join(dir, "study.jsonl")
		f, err := os.Create(out)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		h := &study.Hitrates{Trace: starpu, Windows: []int{100, 1 << 30}, Method: ks.Matlab, Alpha: 0.05}
		reg := builtin.Registry()
		component.RegisterSinkValue(reg, "sweep", h)
		cfg, err := Parse([]byte(fmt.Sprintf(`version: 1
name: hitrate
settings: {status_interval: 0s}
sources:
  trace: {type: file, path: %q, parser: {type: paje}}
stages:
  sig: {type: signal, inputs: [trace], rules: starpu, class: idle, period: 1}
sinks:
  sweep: {type: sweep, inputs: [sig]}
`, filepath.Join(root, "pipelines", starpu))), "hitrate.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if err := Run(t.Context(), cfg, RunOptions{Registry: reg}); err != nil {
			t.Fatal(err)
		}
		if err := h.WriteResults(f, false); err != nil {
			t.Fatal(err)
		}
		if err := ks.TestSamples([]int{0, 1, 1, 2}, []int{5, 6, 5}, ks.Matlab, 0.05).WriteJSON(f, 0.05); err != nil {
			t.Fatal(err)
		}
		counts := schemas.ValidateFile(t, out)
		t.Logf("study: %v", counts)
		if counts["hitrate"] != 2 || counts["kstest"] != 1 {
			t.Errorf("records %v, want 2 hitrate and 1 kstest", counts)
		}
		for k, n := range counts {
			seen[k] += n
		}
	})
	t.Run("kafka", func(t *testing.T) {
		schemaOf := map[string]string{}
		for _, rt := range tracecast.RecordTypes() {
			schemaOf[rt.Name] = rt.Schema
		}
		counts := map[string]int{}
		for _, m := range readTopic(t, addr, "records", 2) {
			name, err := schemas.Validate(m.Value)
			if err != nil {
				t.Fatalf("message %.300s: %v", m.Value, err)
			}
			hdr := map[string]string{}
			for _, h := range m.Headers {
				hdr[h.Key] = string(h.Value)
			}
			if hdr["record"] != name || hdr["schema"] != schemaOf[name] || hdr["content-type"] != "application/json" {
				t.Fatalf("message %.100s: headers %v", m.Value, hdr)
			}
			counts[name]++
		}
		t.Logf("kafka: %v", counts)
		for _, want := range []string{"prediction", "verdict", "alert", "window", "forecast", "outcome", "episode", "skill", "energy"} {
			if counts[want] == 0 {
				t.Errorf("no %s message on the topic", want)
			}
		}
	})
	// Every record type of the registry was written and checked.
	for _, rt := range tracecast.RecordTypes() {
		if seen[rt.Name] == 0 {
			t.Errorf("no %s record in the outputs: its schema was not checked against a real output", rt.Name)
		}
	}
	if names := slices.Sorted(maps.Keys(schemas.ByName)); len(names) != len(tracecast.RecordTypes()) {
		t.Errorf("schemas %v for %d record types", names, len(tracecast.RecordTypes()))
	}
}

// readTopic reads every message of a topic's partitions.
func readTopic(t *testing.T, addr, topic string, partitions int) []kafkago.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var msgs []kafkago.Message
	for p := range partitions {
		conn, err := kafkago.DialLeader(ctx, "tcp", addr, topic, p)
		if err != nil {
			t.Fatal(err)
		}
		high, err := conn.ReadLastOffset()
		conn.Close()
		if err != nil {
			t.Fatal(err)
		}
		r := kafkago.NewReader(kafkago.ReaderConfig{Brokers: []string{addr}, Topic: topic, Partition: p, MaxWait: 200 * time.Millisecond})
		for range high {
			m, err := r.ReadMessage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			msgs = append(msgs, m)
		}
		r.Close()
	}
	return msgs
}
