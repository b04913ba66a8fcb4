package pipelines

import (
	"bytes"
	"context"
	"fmt"
	"github.com/tracecast/tracecast/internal/promexport"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	kafkago "github.com/segmentio/kafka-go"

	"github.com/tracecast/tracecast"
	kafkaingest "github.com/tracecast/tracecast/ingest/kafka"
	"github.com/tracecast/tracecast/internal/gziptest"
	"github.com/tracecast/tracecast/internal/kafkatest"
	"github.com/tracecast/tracecast/pipelines/component"
	"github.com/tracecast/tracecast/study/synth"
)

// testTraces are four StarPU traces: the demo trace and three synthetic
// runs of different sizes, by trace id.
func testTraces(t *testing.T) map[string][]byte {
	t.Helper()
	root, _ := filepath.Abs("..")
	traces := map[string][]byte{"cholesky": gziptest.ReadFile(t, filepath.Join(root, DemoTracePath))}
	for i, w := range []int{4, 8, 3} {
		d, err := synth.NewDAG(synth.DAGParams{Tasks: 200 + 100*i, Seed: uint64(i + 1)})
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if _, err := synth.WriteTrace(&b, d, synth.TraceParams{Workers: w, Seed: uint64(i + 7), Codelets: synth.DefaultCodelets()}); err != nil {
			t.Fatal(err)
		}
		traces[fmt.Sprintf("synth-%d", i+1)] = b.Bytes()
	}
	return traces
}

// publishTraces sends the traces to topic, interleaved chunk by chunk as
// concurrent runs would, each with its end marker.
func publishTraces(t testing.TB, addr, topic string, traces map[string][]byte) {
	t.Helper()
	tr := &kafkago.Transport{}
	defer tr.CloseIdleConnections()
	publishTracesWith(t, tr, addr, topic, traces)
}

// publishTracesWith is publishTraces through the transport tr (TLS, SASL).
func publishTracesWith(t testing.TB, tr *kafkago.Transport, addr, topic string, traces map[string][]byte) {
	t.Helper()
	publishTracesCut(t, tr, addr, topic, traces, 64)
}

// publishTracesCut is publishTracesWith with perMessage lines per message.
func publishTracesCut(t testing.TB, tr *kafkago.Transport, addr, topic string, traces map[string][]byte, perMessage int) {
	t.Helper()
	w := &kafkago.Writer{Addr: kafkago.TCP(addr), Topic: topic, Balancer: &kafkago.Hash{}, BatchTimeout: time.Millisecond, Transport: tr, RequiredAcks: kafkago.RequireAll}
	defer w.Close()
	type cursor struct {
		p     *kafkaingest.Producer
		lines [][]byte
	}
	var cs []*cursor
	ids := make([]string, 0, len(traces))
	for id := range traces {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		cs = append(cs, &cursor{p: &kafkaingest.Producer{W: w, Trace: id, LinesPerMessage: perMessage},
			lines: bytes.Split(bytes.TrimSuffix(traces[id], []byte("\n")), []byte("\n"))})
	}
	for left := len(cs); left > 0; {
		left = 0
		for _, c := range cs {
			if len(c.lines) == 0 {
				continue
			}
			n := min(500, len(c.lines))
			ls := make([]tracecast.Line, n)
			for i := range ls {
				ls[i].Data = c.lines[i]
			}
			c.lines = c.lines[n:]
			if err := c.p.Lines(t.Context(), ls); err != nil {
				t.Fatal(err)
			}
			if len(c.lines) == 0 {
				if err := c.p.End(t.Context()); err != nil {
					t.Fatal(err)
				}
			} else {
				left++
			}
		}
	}
}

// offlinePredictions runs the offline predict stage of live-kafka.yaml's
// options on each trace file: id -> prediction JSON without emitted_at,
// and the same for the verdicts.
func offlinePredictions(t *testing.T, traces map[string][]byte) (want, verdicts map[string]string) {
	t.Helper()
	r := offlineRecords(t, traces, func(string) string {
		return `{type: predict, inputs: [trace], rules: starpu, period: 1, window: 100, queries: ["idle>=25%", "idle>=50%"], time_unit: ms}`
	}, "predictions", "verdicts")
	return r["predictions"], r["verdicts"]
}

// offlineRecords replays each trace file (named as its Kafka key) through
// the stage stage(id) and returns its records of each plural kind: kind ->
// id -> JSON without emission times.
func offlineRecords(t *testing.T, traces map[string][]byte, stage func(id string) string, plurals ...string) map[string]map[string]string {
	t.Helper()
	dir := t.TempDir()
	got := map[string]map[string]string{}
	for _, pl := range plurals {
		got[pl] = map[string]string{}
	}
	for id, data := range traces {
		path := filepath.Join(dir, id)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		var sinks strings.Builder
		for _, pl := range plurals {
			fmt.Fprintf(&sinks, "  %s: {type: jsonl, inputs: [s], records: %s, path: %q}\n", pl, pl, path+"."+pl)
		}
		cfg, err := Parse(fmt.Appendf(nil, `version: 1
name: offline
settings: {status_interval: 0s}
sources:
  trace: {type: file, path: %q, parser: {type: paje, time_unit: ms}}
stages:
  s: %s
sinks:
%s`, path, stage(id), sinks.String()), "offline.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if err := Run(t.Context(), cfg, RunOptions{}); err != nil {
			t.Fatal(err)
		}
		for _, pl := range plurals {
			for _, m := range readJSONL(t, path+"."+pl) {
				rid, b := kafkatest.Normalize(m)
				got[pl][rid] = b
			}
		}
	}
	return got
}

// liveWait bounds how long a test waits for the live pipeline's records: it
// is there to end a hang, not to time the pipeline. Under the race detector
// and make test's parallel packages the 138 predictions of
// TestLiveKafkaDropsBadTrace took 65 s (2.5 s on an idle machine); the
// earlier 60 s failed make test now and then.
const liveWait = 3 * time.Minute

// liveKafkaConfig is the shipped live-kafka pipeline on the broker at addr;
// a sessionTimeout other than "" is its source's session_timeout.
func liveKafkaConfig(t *testing.T, addr, sessionTimeout string) *Config {
	t.Helper()
	cfg, err := Validate("live-kafka.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cfg.Components() {
		if c.Type == "kafka" {
			c.SetOption("brokers", "["+addr+"]")
		}
		if c.Kind == component.KindSource && sessionTimeout != "" {
			c.SetOption("session_timeout", sessionTimeout)
		}
	}
	return cfg
}

// runLiveKafka runs the shipped live-kafka pipeline against the broker at
// addr until want distinct predictions are on the output topic (or
// liveWait), then stops it: the predictions (kafkatest.ReadRecords), the
// message count and the pipeline's error.
func runLiveKafka(t *testing.T, addr string, want int, more ...func()) (map[string]string, int, error) {
	t.Helper()
	cfg := liveKafkaConfig(t, addr, "2s")
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg, RunOptions{}) }()
	got, msgs := kafkatest.ReadRecords(t, addr, "tracecast.predictions", "tracecast.prediction/1", want, liveWait)
	for _, m := range more { // more reading while the pipeline runs
		m()
	}
	cancel()
	return got, msgs, <-done
}

// TestLiveKafkaEndToEnd: four traces interleaved on a 4-partition topic,
// the shipped live-kafka pipeline, and the de-duplicated predictions on the
// output topic are exactly those of the offline predict stage per trace.
func TestLiveKafkaEndToEnd(t *testing.T) {
	traces := testTraces(t)
	want, wantV := offlinePredictions(t, traces)
	if len(want) < 100 {
		t.Fatalf("only %d offline predictions", len(want))
	}
	addr := kafkatest.Start(t, 4, "tracecast.traces", "tracecast.predictions", "tracecast.forecasts", "tracecast.alerts")
	publishTraces(t, addr, "tracecast.traces", traces)

	wantF := offlineForecasts(t, traces)
	var gotF, gotV map[string]string
	got, msgs, err := runLiveKafka(t, addr, len(want), func() {
		gotV, _ = kafkatest.ReadRecords(t, addr, "tracecast.predictions", "tracecast.verdict/1", len(wantV), liveWait)
		gotF, _ = kafkatest.ReadRecords(t, addr, "tracecast.forecasts", "tracecast.forecast/1", len(wantF), liveWait)
	})
	if err != nil {
		t.Fatal(err)
	}
	kafkatest.CompareRecords(t, got, want)
	// The verdicts too (KS D and p of each window) equal the offline
	// replay's: the first window's once had D = 0.36 live, 0.40 offline.
	kafkatest.CompareRecords(t, gotV, wantV)
	// Forecasts too are a function of the trace alone: the live ones, from
	// interleaved Kafka messages, are the offline file replay's.
	kafkatest.CompareRecords(t, gotF, wantF)
	t.Logf("%d traces, %d predictions (%d messages), %d forecasts", len(traces), len(got), msgs, len(gotF))
}

// offlineForecasts runs the live pipelines' forecast stage on each trace
// file (named as the Kafka key, the run id).
func offlineForecasts(t *testing.T, traces map[string][]byte) map[string]string {
	t.Helper()
	return offlineRecords(t, traces, func(id string) string {
		return fmt.Sprintf(`{type: forecast, inputs: [trace], rules: starpu, queries: ["idle>=25%%"], horizons: [10ms, 100ms, 1s], every: 5ms, time_unit: ms, run_id: %q}`, id)
	}, "forecasts")["forecasts"]
}

// TestLivePredictIgnoresBatching: the live predictions and verdicts of a
// trace do not depend on how its lines were cut into batches (a Kafka
// replay at full speed delivers thousands of lines at once, a tailed run a
// few), and equal the offline replay's: R, the windows, the likelihoods and
// the KS verdicts are functions of the trace alone. (The first window's
// verdict once had D = 0.36 live against 0.40 offline: the live sampler did
// not count a worker before its first state.)
func TestLivePredictIgnoresBatching(t *testing.T) {
	root, _ := filepath.Abs("..")
	var first map[string]string
	for _, n := range []int{0, 1, 7, 4096} { // 0: the offline stage
		dir := t.TempDir()
		cfg, err := Parse(fmt.Appendf(nil, `version: 1
name: batching
settings: {status_interval: 0s}
sources:
  trace: {type: file, path: %q, batch_lines: %d, parser: {type: paje, time_unit: ms}}
stages:
  idle: {type: predict, inputs: [trace], live: %v, rules: starpu, period: 1, window: 100, queries: ["idle>=25%%", "idle>=50%%"], time_unit: ms}
sinks:
  p: {type: jsonl, inputs: [idle], records: predictions, path: %q}
  v: {type: jsonl, inputs: [idle], records: verdicts, path: %q}
`, filepath.Join(root, DemoTracePath), max(n, 4096), n > 0, filepath.Join(dir, "p.jsonl"), filepath.Join(dir, "v.jsonl")), "batching.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if err := Run(t.Context(), cfg, RunOptions{}); err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, f := range []string{"p.jsonl", "v.jsonl"} {
			for _, m := range readJSONL(t, filepath.Join(dir, f)) {
				id, b := kafkatest.Normalize(m)
				got[id] = b
			}
		}
		if first == nil {
			first = got
			if len(got) != 274 {
				t.Fatalf("%d predictions and verdicts, want 274", len(got))
			}
			continue
		}
		kafkatest.CompareRecords(t, got, first)
	}
}

// TestLiveKafkaDropsBadTrace: a trace with a bad line ends (logged) without
// stopping the pipeline (live-kafka's stream_errors: drop); the other
// traces' predictions are complete.
func TestLiveKafkaDropsBadTrace(t *testing.T) {
	good := testTraces(t)["cholesky"]
	lines := bytes.SplitAfter(good, []byte("\n"))
	bad := bytes.Join(append(append(lines[:len(lines)/2:len(lines)/2], []byte("999 not a paje event\n")), lines[len(lines)/2:]...), nil)
	want, _ := offlinePredictions(t, map[string][]byte{"good": good})
	addr := kafkatest.Start(t, 1, "tracecast.traces", "tracecast.predictions", "tracecast.forecasts", "tracecast.alerts")
	publishTraces(t, addr, "tracecast.traces", map[string][]byte{"bad": bad, "good": good})
	got, _, err := runLiveKafka(t, addr, len(want))
	if err != nil {
		t.Fatalf("the bad trace stopped the pipeline: %v", err)
	}
	goodOnly, nbad := map[string]string{}, 0
	for id, rec := range got {
		if strings.HasPrefix(id, "good/") {
			goodOnly[id] = rec
		} else {
			nbad++
		}
	}
	if nbad >= len(want) {
		t.Errorf("%d predictions of the bad trace: it was not dropped at its bad line", nbad)
	}
	kafkatest.CompareRecords(t, goodOnly, want)
}

// groupCommitted reports whether the live pipelines' group committed every
// message of topic (commits follow only what every sink holds durably).
func groupCommitted(t *testing.T, addr, topic string) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	ids := kafkatest.Partitions(ctx, t, kafkago.DefaultDialer, addr, topic)
	tr := &kafkago.Transport{}
	defer tr.CloseIdleConnections()
	c := &kafkago.Client{Addr: kafkago.TCP(addr), Transport: tr}
	res, err := c.OffsetFetch(ctx, &kafkago.OffsetFetchRequest{GroupID: "tracecast-live", Topics: map[string][]int{topic: ids}})
	if err != nil || len(res.Topics[topic]) != len(ids) {
		return false
	}
	for _, p := range res.Topics[topic] {
		lc, err := kafkago.DialLeader(ctx, "tcp", addr, topic, p.Partition)
		if err != nil {
			return false
		}
		last, err := lc.ReadLastOffset()
		lc.Close()
		if err != nil || max(p.CommittedOffset, 0) < last {
			return false
		}
	}
	return true
}

// compareSubset fails the test for a record of got that differs from
// want's or that want lacks; records of want missing from got are counted.
func compareSubset(t *testing.T, kind string, got, want map[string]string) (missing int) {
	t.Helper()
	for id, g := range got {
		w, ok := want[id]
		switch {
		case !ok:
			t.Errorf("%s: unexpected record %s", kind, id)
		case g != w:
			t.Errorf("%s: changed record %s:\n got %s\nwant %s", kind, id, g, w)
		}
	}
	for id := range want {
		if _, ok := got[id]; !ok {
			missing++
		}
	}
	return missing
}

// TestLiveKafkaEvictionChangesNoRecord: with more interleaved traces than
// max_streams, the parser evicts traces; the stages after it must drop
// what they hold of an evicted trace instead of flushing it at its end
// marker (a likelihood of 0.01 where the offline replay says 0 was
// published): records of evicted traces may be missing, never different.
func TestLiveKafkaEvictionChangesNoRecord(t *testing.T) {
	if testing.Short() {
		t.Skip("a broker and four traces")
	}
	traces := testTraces(t)
	want, wantV := offlinePredictions(t, traces)
	wantF := offlineForecasts(t, traces)
	addr := kafkatest.Start(t, 1, "tracecast.traces", "tracecast.predictions", "tracecast.forecasts", "tracecast.alerts")
	publishTraces(t, addr, "tracecast.traces", traces)

	cfg := liveKafkaConfig(t, addr, "")
	if err := cfg.Override("traces.parser.max_streams=1"); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	var evicted float64
	runUntilCommitted(t, cfg, addr, RunOptions{Metrics: promexport.Registry{Registerer: reg}}, 90*time.Second, func() {
		evicted = metricValue(t, reg, "tracecast_streams_evicted_total")
	})
	// Everything derived from the topic is durable: read what is there.
	got, gotV, gotF := readLiveRecords(t, addr, len(want), len(wantV), len(wantF), 3*time.Second)
	mp := compareSubset(t, "predictions", got, want)
	mv := compareSubset(t, "verdicts", gotV, wantV)
	mf := compareSubset(t, "forecasts", gotF, wantF)
	if evicted == 0 {
		t.Errorf("no trace evicted with max_streams 1 and %d interleaved traces", len(traces))
	}
	t.Logf("%v evictions; kept %d/%d predictions, %d/%d verdicts, %d/%d forecasts (missing %d, %d, %d), none changed",
		evicted, len(got), len(want), len(gotV), len(wantV), len(gotF), len(wantF), mp, mv, mf)
}

// runUntilCommitted runs cfg until its consumer group has committed the
// whole traces topic on the broker at addr (within deadline, or the test
// fails), calls before, when given, on the running pipeline, and stops it.
func runUntilCommitted(t *testing.T, cfg *Config, addr string, opts RunOptions, deadline time.Duration, before func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg, opts) }()
	end := time.Now().Add(deadline)
	for !groupCommitted(t, addr, "tracecast.traces") {
		if time.Now().After(end) {
			cancel()
			<-done
			t.Fatalf("the pipeline did not commit the whole topic in %v", deadline)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if before != nil {
		before()
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// readLiveRecords reads the live pipeline's predictions, verdicts and
// forecasts on the broker at addr (kafkatest.ReadRecords), until it has
// as many of each as given or wait is over.
func readLiveRecords(t *testing.T, addr string, preds, verdicts, forecasts int, wait time.Duration) (got, gotV, gotF map[string]string) {
	t.Helper()
	got, _ = kafkatest.ReadRecords(t, addr, "tracecast.predictions", "tracecast.prediction/1", preds, wait)
	gotV, _ = kafkatest.ReadRecords(t, addr, "tracecast.predictions", "tracecast.verdict/1", verdicts, wait)
	gotF, _ = kafkatest.ReadRecords(t, addr, "tracecast.forecasts", "tracecast.forecast/1", forecasts, wait)
	return got, gotV, gotF
}

// metricValue sums the samples of a metric family of reg.
func metricValue(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if c := m.GetCounter(); c != nil {
				sum += c.GetValue()
			} else if g := m.GetGauge(); g != nil {
				sum += g.GetValue()
			}
		}
	}
	return sum
}

// TestLiveKafkaIgnoresMessageCutAndPartitions: the live records are a
// function of the traces alone, whatever the lines per message (1, 64,
// 4096) and the topic's partitions (1, 4): the predictions, verdicts and
// forecasts of the shipped live-kafka pipeline equal the offline replay's.
func TestLiveKafkaIgnoresMessageCutAndPartitions(t *testing.T) {
	if testing.Short() {
		t.Skip("six brokers and live runs")
	}
	traces := testTraces(t)
	want, wantV := offlinePredictions(t, traces)
	wantF := offlineForecasts(t, traces)
	for _, parts := range []int32{1, 4} {
		for _, per := range []int{1, 64, 4096} {
			t.Run(fmt.Sprintf("partitions=%d/lines_per_message=%d", parts, per), func(t *testing.T) {
				addr := kafkatest.Start(t, parts, "tracecast.traces", "tracecast.predictions", "tracecast.forecasts", "tracecast.alerts")
				tr := &kafkago.Transport{}
				publishTracesCut(t, tr, addr, "tracecast.traces", traces, per)
				tr.CloseIdleConnections()
				runUntilCommitted(t, liveKafkaConfig(t, addr, ""), addr, RunOptions{}, 120*time.Second, nil)
				// Everything derived from the topic is durable.
				got, gotV, gotF := readLiveRecords(t, addr, len(want), len(wantV), len(wantF), 10*time.Second)
				kafkatest.CompareRecords(t, got, want)
				kafkatest.CompareRecords(t, gotV, wantV)
				kafkatest.CompareRecords(t, gotF, wantF)
			})
		}
	}
}
