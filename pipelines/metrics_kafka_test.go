package pipelines

import (
	"bytes"
	"context"
	"fmt"
	"github.com/tracecast/tracecast/internal/promexport"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	kafkago "github.com/segmentio/kafka-go"

	"github.com/tracecast/tracecast"
	kafkaingest "github.com/tracecast/tracecast/ingest/kafka"
	"github.com/tracecast/tracecast/internal/kafkatest"
)

// startLiveKafkaMetrics runs the shipped live-kafka pipeline against the
// broker at addr with its metrics on a loopback port: a scrape function,
// and stop, which stops the pipeline and returns its error.
func startLiveKafkaMetrics(t *testing.T, addr string) (scrape func() scrapeOf, stop func() error) {
	t.Helper()
	cfg := liveKafkaConfig(t, addr, "2s")
	reg, h, scrape := metricsServer(t)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg, RunOptions{Metrics: promexport.Registry{Registerer: reg}, Health: h}) }()
	var err2 error
	stopped := false
	stop = func() error {
		if !stopped {
			stopped = true
			cancel()
			err2 = <-done
		}
		return err2
	}
	t.Cleanup(func() { stop() })
	return scrape, stop
}

// publishTrace sends one trace's lines to topic, with its end marker when
// end is set.
func publishTrace(t *testing.T, addr, topic, id string, data []byte, end bool) {
	t.Helper()
	tr := &kafkago.Transport{}
	defer tr.CloseIdleConnections()
	w := &kafkago.Writer{Addr: kafkago.TCP(addr), Topic: topic, Balancer: &kafkago.Hash{}, BatchTimeout: time.Millisecond, Transport: tr, RequiredAcks: kafkago.RequireAll}
	defer w.Close()
	p := &kafkaingest.Producer{W: w, Trace: id, LinesPerMessage: 64}
	if len(data) > 0 {
		raw := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
		ls := make([]tracecast.Line, len(raw))
		for i := range ls {
			ls[i].Data = raw[i]
		}
		if err := p.Lines(t.Context(), ls); err != nil {
			t.Fatal(err)
		}
	}
	if end {
		if err := p.End(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
}

func lineCount(data []byte) float64 {
	return float64(bytes.Count(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) + 1)
}

// TestLiveKafkaMetrics scrapes the shipped live-kafka pipeline while it
// reads two good traces and a bad one until all three ended: counters never
// go down (a trace that ended once took its lines out of lines_total), each
// run's last forecast skill stays after its end, the Kafka sinks count the
// records they wrote, and the trace dropped at its bad line is counted.
func TestLiveKafkaMetrics(t *testing.T) {
	traces := testTraces(t)
	bad := traces["synth-2"]
	lines := bytes.SplitAfter(bad, []byte("\n"))
	bad = bytes.Join(append(append(lines[:len(lines)/2:len(lines)/2], []byte("999 not a paje event\n")), lines[len(lines)/2:]...), nil)
	addr := kafkatest.Start(t, 4, "tracecast.traces", "tracecast.predictions", "tracecast.forecasts", "tracecast.alerts")
	publishTraces(t, addr, "tracecast.traces", map[string][]byte{"cholesky": traces["cholesky"], "synth-1": traces["synth-1"], "bad": bad})
	wantLines := lineCount(traces["cholesky"]) + lineCount(traces["synth-1"])

	scrape, stop := startLiveKafkaMetrics(t, addr)
	var scrapes []scrapeOf
	deadline := time.Now().Add(60 * time.Second)
	stable, last := 0, -1.0
	for {
		time.Sleep(100 * time.Millisecond)
		sc := scrape()
		scrapes = append(scrapes, sc)
		// Done when every trace ended and the sinks got nothing new for 2 s.
		written := 0.0
		for _, s := range sc.all("tracecast_records_in_total", "kind", "sink") {
			written += s.value
		}
		open, _ := sc.get(t, "tracecast_open_streams", "component", "traces", "kind", "parser")
		openF, _ := sc.get(t, "tracecast_open_streams", "component", "forecast")
		if written > 0 && written == last && open == 0 && openF == 0 {
			stable++
		} else {
			stable = 0
		}
		last = written
		if stable >= 20 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the traces were not all read in 60 s: %d series in the last scrape", len(sc))
		}
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	final := scrapes[len(scrapes)-1]

	t.Run("counters never go down", func(t *testing.T) {
		seen := map[string]float64{}
		for i, sc := range scrapes {
			now := map[string]bool{}
			for _, s := range sc {
				if !strings.HasSuffix(s.name, "_total") {
					continue
				}
				k := s.key()
				now[k] = true
				if prev, ok := seen[k]; ok && s.value < prev {
					t.Fatalf("scrape %d: %s went down: %v -> %v", i, k, prev, s.value)
				}
				seen[k] = s.value
			}
			for k := range seen {
				if !now[k] {
					t.Fatalf("scrape %d: counter %s vanished", i, k)
				}
			}
		}
		if got, _ := final.get(t, "tracecast_lines_total", "component", "traces"); got < wantLines {
			t.Errorf("lines_total %v once every trace ended, want at least the good traces' %v", got, wantLines)
		}
	})
	t.Run("skill kept after the run ended", func(t *testing.T) {
		for _, run := range []string{"cholesky", "synth-1"} {
			if ss := final.all("tracecast_forecast_coverage", "component", "forecast", "run", run); len(ss) == 0 {
				t.Errorf("run %s: no forecast_coverage after its end", run)
			}
			if ss := final.all("tracecast_forecast_skill", "component", "forecast", "run", run); len(ss) == 0 {
				t.Errorf("run %s: no forecast_skill after its end", run)
			}
		}
	})
	t.Run("kafka sinks count the records written", func(t *testing.T) {
		for _, s := range final.all("tracecast_records_in_total", "kind", "sink") {
			out, _ := final.get(t, "tracecast_records_out_total", "component", s.labels["component"])
			if out != s.value {
				t.Errorf("sink %s: records_out_total %v, records_in_total %v", s.labels["component"], out, s.value)
			}
		}
		if n, _ := final.get(t, "tracecast_records_out_total", "component", "predictions"); n == 0 {
			t.Error("no prediction written")
		}
	})
	t.Run("every metric documented", func(t *testing.T) {
		doc, err := os.ReadFile("../docs/metrics.md")
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, s := range final {
			name := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(s.name, "_bucket"), "_sum"), "_count")
			if strings.HasPrefix(name, "tracecast_") && !seen[name] && !strings.Contains(string(doc), "`"+name+"`") {
				t.Errorf("%s is served but not in docs/metrics.md", name)
			}
			seen[name] = true
		}
	})
	t.Run("dropped trace counted", func(t *testing.T) {
		if n, ok := final.get(t, "tracecast_streams_dropped_total", "component", "traces", "kind", "parser"); n != 1 {
			t.Errorf("streams_dropped_total %v (present: %v), want 1", n, ok)
		}
	})
}

// TestLiveKafkaSkillWhileRunning: the forecasts' rolling skill of a run
// still going (no end marker yet) is scraped; the demo trace spans 7 s, so
// live-kafka's skill_every must be shorter than that.
func TestLiveKafkaSkillWhileRunning(t *testing.T) {
	addr := kafkatest.Start(t, 4, "tracecast.traces", "tracecast.predictions", "tracecast.forecasts", "tracecast.alerts")
	publishTrace(t, addr, "tracecast.traces", "cholesky", testTraces(t)["cholesky"], false)
	scrape, stop := startLiveKafkaMetrics(t, addr)
	deadline := time.Now().Add(30 * time.Second)
	for {
		sc := scrape()
		open, _ := sc.get(t, "tracecast_open_streams", "component", "forecast")
		if ss := sc.all("tracecast_forecast_skill", "run", "cholesky"); len(ss) > 0 && open == 1 {
			t.Logf("%d skill series while the run is open, e.g. %s %v", len(ss), ss[0].key(), ss[0].value)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no forecast_skill of the open run in 30 s (open streams: %v)", open)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

// TestKafkaSourceMetricsUnderBackpressure: the Kafka source's lag and
// commit age are computed when scraped. While a sink holds the pipeline
// back (the source blocked on a full queue), the age of the last commit
// keeps growing (it once stayed at 0.1985 s for more than 10 s), the lag
// grows with the messages published meanwhile, and every assigned
// partition has a lag, not only those that delivered a message.
func TestKafkaSourceMetricsUnderBackpressure(t *testing.T) {
	addr := kafkatest.Start(t, 4, "lines")
	st := newStore()
	cfg, err := Parse(fmt.Appendf(nil, `version: 1
name: bp
settings: {status_interval: 0s, edge_capacity: 1, shutdown_timeout: 10s}
sources:
  in: {type: kafka, brokers: [%q], topic: lines, group: bp, commit_interval: 200ms, session_timeout: 2s, parser: {type: num}}
sinks:
  out: {type: capture, inputs: [in], holdable: true}
`, addr), "bp.yaml")
	if err != nil {
		t.Fatal(err)
	}
	reg, h, scrape := metricsServer(t)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, cfg, RunOptions{Registry: testRegistry(st), Metrics: promexport.Registry{Registerer: reg}, Health: h})
	}()
	stop := sync.OnceValue(func() error {
		close(st.release)
		cancel()
		return <-done
	})
	defer stop()

	tr := &kafkago.Transport{}
	defer tr.CloseIdleConnections()
	w := &kafkago.Writer{Addr: kafkago.TCP(addr), Topic: "lines", Balancer: &kafkago.Hash{}, BatchTimeout: time.Millisecond, Transport: tr, RequiredAcks: kafkago.RequireAll}
	defer w.Close()
	p := &kafkaingest.Producer{W: w, Trace: "run", LinesPerMessage: 1}
	next := 0
	publish := func(n int) {
		t.Helper()
		ls := make([]tracecast.Line, n)
		for i := range ls {
			next++
			ls[i].Data = []byte(strconv.Itoa(next))
		}
		if err := p.Lines(t.Context(), ls); err != nil {
			t.Fatal(err)
		}
	}
	waitFor := func(what string, ok func(scrapeOf) bool) scrapeOf {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			sc := scrape()
			if ok(sc) {
				return sc
			}
			if time.Now().After(deadline) {
				t.Fatalf("no %s in 30 s", what)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	lag := func(sc scrapeOf) (total float64, parts int) {
		for _, s := range sc.all("tracecast_kafka_consumer_lag", "component", "in", "topic", "lines") {
			total += s.value
			parts++
		}
		return total, parts
	}

	publish(10)
	sc := waitFor("commit", func(sc scrapeOf) bool {
		n, _ := sc.get(t, "tracecast_kafka_commits_total", "component", "in")
		_, parts := lag(sc)
		return n >= 1 && parts == 4
	})
	if total, _ := lag(sc); total != 0 {
		t.Errorf("lag %v once everything published was read", total)
	}
	// The positions: the 10 messages (one line each) handled, over the
	// partitions.
	offsets := func(sc scrapeOf) (total float64, parts int) {
		for _, s := range sc.all("tracecast_kafka_consumer_offset", "component", "in", "topic", "lines") {
			total += s.value
			parts++
		}
		return total, parts
	}
	if total, parts := offsets(sc); total != 10 || parts != 4 {
		t.Errorf("consumer offsets sum to %v over %d partitions once the 10 messages were read, want 10 over 4", total, parts)
	}

	// Hold the sink; publish message by message until every queue is
	// full, then one more: the source is blocked emitting it.
	st.hold.Store(true)
	waitFor("full queues", func(sc scrapeOf) bool {
		publish(1)
		time.Sleep(100 * time.Millisecond)
		full := true
		for _, q := range sc.all("tracecast_queue_batches") {
			full = full && q.value == 1
		}
		return full && len(sc.all("tracecast_queue_batches")) == 2
	})
	publish(1)
	time.Sleep(500 * time.Millisecond)
	publish(20)
	first := waitFor("lag of the 20 messages published while blocked", func(sc scrapeOf) bool {
		total, _ := lag(sc)
		return total >= 20
	})
	age1, ok := first.get(t, "tracecast_kafka_last_commit_age_seconds", "component", "in")
	if !ok {
		t.Fatal("no kafka_last_commit_age_seconds")
	}
	time.Sleep(1500 * time.Millisecond)
	second := scrape()
	age2, _ := second.get(t, "tracecast_kafka_last_commit_age_seconds", "component", "in")
	if age2-age1 < 1.4 {
		t.Errorf("the last commit's age went from %v to %v in 1.5 s while the source was blocked", age1, age2)
	}
	if total, parts := lag(second); total < 20 || parts != 4 {
		t.Errorf("lag %v over %d partitions while blocked, want at least 20 over 4", total, parts)
	}
	// Blocked, the source has not handled the last 20 messages (nor the
	// one it is blocked emitting).
	if total, _ := offsets(second); total > float64(next-20) {
		t.Errorf("consumer offsets sum to %v while blocked, %d messages published: want at most %d", total, next, next-20)
	}
	t.Logf("blocked: commit age %.2f s -> %.2f s, lag %v", age1, age2, func() float64 { v, _ := lag(second); return v }())
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}
