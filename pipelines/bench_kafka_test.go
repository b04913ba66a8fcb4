package pipelines

import (
	"bytes"
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/app/builtin"
	"github.com/tracecast/tracecast/internal/kafkatest"
	"github.com/tracecast/tracecast/parsers/paje"
	"github.com/tracecast/tracecast/pipelines/component"
	"github.com/tracecast/tracecast/study/synth"
)

// countSink counts entities (or lines, without a parser) and closes done
// when it reaches want; first and last are when the first records came
// and when the last did.
type countSink struct {
	n, want     int64
	done        chan struct{}
	first, last time.Time
}

func (s *countSink) Write(ctx context.Context, b tracecast.Batch) error {
	if s.n >= s.want || s.done == nil {
		return nil
	}
	var n int
	switch items := b.Items.(type) {
	case []tracecast.Entity:
		n = len(items)
	case []tracecast.Line:
		n = len(items)
	}
	if n > 0 && s.n == 0 {
		s.first = time.Now()
	}
	if s.n += int64(n); s.n >= s.want {
		s.last = time.Now()
		close(s.done)
	}
	return nil
}

func (s *countSink) Close(context.Context) error { return nil }

// BenchmarkKafkaIngest measures sustained ingest of trace lines from Kafka:
// four synthetic StarPU traces (about 1M lines, 40 MB) in a 4-partition
// topic of an in-process broker, read by the kafka source (consumer group,
// checkpoint barriers every second): the lines alone (the source's
// decoding), then parsed by the paje parser into entities, then with the
// live predict stage too. Each iteration is a new group reading everything
// from the start, join included; it ends when the sink has every line or
// entity. The broker runs in the same process, on the same cores.
//
// Metrics: lines/s is the sustained rate, from the first records out of
// the pipeline to the last; e2e_lines/s counts the whole iteration, the
// group join before (~40 ms) and the graceful stop after (a last
// checkpoint committed, the group left: ~150 ms), which are fixed costs.
func BenchmarkKafkaIngest(b *testing.B) {
	traces := map[string][]byte{}
	var lines, bytesTotal, entities int64
	for i, w := range []int{16, 32, 8, 64} {
		d, err := synth.NewDAG(synth.DAGParams{Tasks: 30000, Seed: uint64(i + 1)})
		if err != nil {
			b.Fatal(err)
		}
		var buf bytes.Buffer
		if _, err := synth.WriteTrace(&buf, d, synth.TraceParams{Workers: w, Seed: uint64(i + 1), Codelets: synth.DefaultCodelets()}); err != nil {
			b.Fatal(err)
		}
		id := fmt.Sprintf("bench-%d", i)
		traces[id] = buf.Bytes()
		lines += int64(bytes.Count(buf.Bytes(), []byte("\n")))
		bytesTotal += int64(buf.Len())
		entities += countEntities(b, id, buf.Bytes())
	}
	addr := kafkatest.Start(b, 4, "traces")
	publishTraces(b, addr, "traces", traces)

	var group atomic.Int64
	b.Run("lines", func(b *testing.B) { benchIngest(b, addr, &group, "", "", lines, lines, bytesTotal) })
	for _, v := range []struct{ name, stages string }{
		{"parse", ""},
		// The live predict stage too (its outputs are dropped): the
		// parser waits for it when it is slower (backpressure).
		{"parse+predict", `
stages:
  idle: {type: predict, inputs: [traces], live: true, rules: starpu, period: 1, window: 100, queries: ["idle>=25%"], time_unit: ms}`},
	} {
		b.Run(v.name, func(b *testing.B) {
			benchIngest(b, addr, &group, ", parser: {type: paje, time_unit: ms}", v.stages, entities, lines, bytesTotal)
		})
	}
}

func benchIngest(b *testing.B, addr string, group *atomic.Int64, parser, stages string, entities, lines, bytesTotal int64) {
	b.SetBytes(bytesTotal)
	b.ReportAllocs()
	var sustained time.Duration
	for b.Loop() {
		sink := &countSink{want: entities, done: make(chan struct{})}
		r := builtin.Registry()
		component.RegisterSink(r, "count", "", nil, func(component.Env, struct{}) (tracecast.Sink, error) { return sink, nil })
		component.RegisterSink(r, "drop", "", nil, func(component.Env, struct{}) (tracecast.Sink, error) { return &countSink{}, nil })
		cfg, err := Parse(fmt.Appendf(nil, `version: 1
name: ingest
settings: {status_interval: 0s}
sources:
  traces: {type: kafka, brokers: [%q], topic: traces, group: g%d, session_timeout: 2s%s}%s
sinks:
  n: {type: count, inputs: [traces]}%s
`, addr, group.Add(1), parser, stages, dropSink(stages)), "ingest.yaml")
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(b.Context())
		done := make(chan error, 1)
		go func() { done <- Run(ctx, cfg, RunOptions{Registry: r}) }()
		select {
		case <-sink.done:
		case err := <-done:
			b.Fatalf("pipeline stopped early: %v", err)
		case <-time.After(2 * time.Minute):
			b.Fatalf("timeout: %d of %d entities", sink.n, entities)
		}
		sustained += sink.last.Sub(sink.first)
		cancel()
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(lines)*float64(b.N)/sustained.Seconds(), "lines/s")
	b.ReportMetric(float64(lines)*float64(b.N)/b.Elapsed().Seconds(), "e2e_lines/s")
}

// countEntities parses a trace as one stream and counts its entities.
func countEntities(b *testing.B, name string, data []byte) int64 {
	o := paje.DefaultOptions()
	o.Name, o.TimeUnit = name, "ms"
	p := paje.NewProcessor(o)
	var n int64
	emit := func(_ context.Context, b tracecast.Batch) error {
		n += int64(len(b.Items.([]tracecast.Entity)))
		return nil
	}
	var ls []tracecast.Line
	for i, l := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		ls = append(ls, tracecast.Line{Data: l, Num: int64(i + 1)})
	}
	if err := p.Process(b.Context(), tracecast.Batch{Stream: name, Items: ls}, emit); err != nil {
		b.Fatal(err)
	}
	if err := p.Flush(b.Context(), emit); err != nil {
		b.Fatal(err)
	}
	return n
}

func dropSink(stages string) string {
	if stages == "" {
		return ""
	}
	return "\n  drop: {type: drop, inputs: [idle]}"
}
