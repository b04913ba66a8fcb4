package pipelines

// The latency half of `make bench-live` (tools/bench-live.sh): from a line
// being appended to a tailed trace to the prediction it completes appearing
// on the output topic, through tail → paje → live predict → kafka, and a
// kafka-go reader on the other side.
//
// Which line completes a prediction is found offline first, exactly: the
// trace's lines go one at a time through the same paje parser and live
// predict stage the pipeline builds, and each prediction is attributed to
// the line after which the stage emitted it. The live run then appends the
// trace to the followed file in the trace's own time (1 ms of trace time per
// ms of wall time, as StarPU writes it: 50k lines in 7 s), the lines due by
// the time the writer wakes in one write (~1,700 appends of ~30 lines, no
// fsync), records when each line was written, and measures each
// prediction's latency as its arrival time minus the write time of its
// completing line. Predictions that only the end of input completes (the
// windows within the parser's 3 s reorder horizon of the end) are checked
// for but not measured.

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	kafkago "github.com/segmentio/kafka-go"
	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/app/builtin"
	"github.com/tracecast/tracecast/internal/kafkatest"
	"github.com/tracecast/tracecast/parsers/paje"
	"github.com/tracecast/tracecast/pipelines/component"
	"github.com/tracecast/tracecast/stages/predict"
)

// liveBench are the knobs of the measured pipeline: live-tail.yaml's
// parser and predict stage, with the latency knobs of the transport.
type liveBench struct {
	Queries      []string      // the predict stage's queries
	Poll         time.Duration // tail: how often it looks for new data
	BatchTimeout time.Duration // kafka sink: how long a message waits for others
	MaxWait      time.Duration // kafka-go reader: how long a fetch may wait on the broker
	Speed        float64       // trace ms per wall ms when appending
}

// defaultLiveBench: live-tail.yaml's settings: the tail follows the file
// with notifications and polls every 10 ms as their fallback; the sink
// keeps its default batch_timeout (0: a write's messages leave at once);
// the reader's fetches may wait 250 ms, which costs nothing since the
// broker answers a waiting fetch as soon as a message arrives. A small
// MaxWait does cost: kafka-go gives the broker MaxWait×3/4 and its own
// read MaxWait, so with 10 ms an answer 2.5 ms late (GC, a busy core)
// times the read out, and the reader reconnects: 50–100 ms spikes.
func defaultLiveBench() liveBench {
	return liveBench{
		Queries:      []string{"idle>=25%", "idle>=50%"},
		Poll:         10 * time.Millisecond,
		BatchTimeout: 0,
		MaxWait:      250 * time.Millisecond,
		Speed:        1,
	}
}

// fromEnv overrides the knobs with TRACECAST_BENCH_POLL,
// TRACECAST_BENCH_BATCH_TIMEOUT, TRACECAST_BENCH_MAX_WAIT (durations) and
// TRACECAST_BENCH_SPEED (2 plays the trace at twice its speed).
func (lb liveBench) fromEnv(tb testing.TB) liveBench {
	tb.Helper()
	for name, d := range map[string]*time.Duration{"TRACECAST_BENCH_POLL": &lb.Poll,
		"TRACECAST_BENCH_BATCH_TIMEOUT": &lb.BatchTimeout, "TRACECAST_BENCH_MAX_WAIT": &lb.MaxWait} {
		if s := os.Getenv(name); s != "" {
			v, err := time.ParseDuration(s)
			if err != nil || v < 0 || v == 0 && name != "TRACECAST_BENCH_BATCH_TIMEOUT" {
				tb.Fatalf("%s=%q: want a positive duration (2ms)", name, s)
			}
			*d = v
		}
	}
	if s := os.Getenv("TRACECAST_BENCH_SPEED"); s != "" {
		v, err := strconv.ParseFloat(strings.TrimSuffix(s, "x"), 64)
		if err != nil || v <= 0 {
			tb.Fatalf("TRACECAST_BENCH_SPEED=%q: want a positive number", s)
		}
		lb.Speed = v
	}
	return lb
}

const liveBenchTrace = "bench" // the trace id in the records (so in the ids)

// predictOptions is the live predict stage of live-tail.yaml.
func (lb liveBench) predictOptions() predict.StageConfig {
	o := predict.DefaultStageConfig()
	o.Live, o.Rules, o.Period, o.Window = true, "starpu", tracecast.TraceUnits(1), 100
	o.Queries = lb.Queries
	o.IdleThreshold, o.RegimeMisses, o.TimeUnit, o.Trace = 0.8, 3, "ms", liveBenchTrace
	return o
}

func (lb liveBench) pajeOptions() paje.ParserConfig {
	o := paje.DefaultParserConfig()
	o.TimeUnit = "ms"
	return o
}

// config is the pipeline the benchmark runs: the same parser and stage
// options as predictOptions and pajeOptions, in YAML.
func (lb liveBench) config(tb testing.TB, path, broker, topic string) *Config {
	tb.Helper()
	qs, _ := json.Marshal(lb.Queries)
	o := lb.predictOptions()
	yaml := fmt.Sprintf(`version: 1
name: bench-live
settings: {status_interval: 0s, edge_capacity: 16}
sources:
  trace: {type: tail, path: %q, start: beginning, poll: %s, end_after: 300ms, parser: {type: paje, time_unit: ms}}
stages:
  idle: {type: predict, inputs: [trace], live: true, rules: %s, period: %s, window: %d, queries: %s, idle_threshold: %g, regime_misses: %d, time_unit: %s, trace: %s}
sinks:
  predictions: {type: kafka, inputs: [idle], records: predictions, brokers: [%q], topic: %s, batch_timeout: %s}
`, path, lb.Poll, o.Rules, o.Period, o.Window, qs, o.IdleThreshold, o.RegimeMisses, o.TimeUnit, o.Trace, broker, topic, lb.BatchTimeout)
	cfg, err := Parse([]byte(yaml), "bench-live.yaml")
	if err != nil {
		tb.Fatal(err)
	}
	return cfg
}

// demoTraceLines is the embedded StarPU trace, one slice per line with its
// newline.
func demoTraceLines(tb testing.TB) [][]byte {
	tb.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(DemoTrace()))
	if err != nil {
		tb.Fatal(err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		tb.Fatal(err)
	}
	return bytes.SplitAfter(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
}

// attribution says which line completes each prediction.
type attribution struct {
	// At is the index (0-based, in the trace's lines) of the line after
	// which the stage emitted the prediction; atStop for those emitted only
	// when the input ends (the last windows, behind the watermark).
	At map[string]int
	// Order is every prediction, in the order the stage emitted them.
	Order []tracecast.Prediction
}

const atStop = -1

// attributeChunk is the probe's step in attribute: ~60 times fewer stage
// calls than one per line on the demo trace.
const attributeChunk = 64

// feeder is a paje parser and a live predict stage, called synchronously.
// It hands lines over like the tail source does (without the newline,
// numbered from 1), to the pipeline's parser processor, or, when eager, to
// a bare paje.Parser whose watermark goes to the stage after every feed,
// with or without completed entities (the processor only passes a
// watermark on with entities).
type feeder struct {
	proc  tracecast.Processor
	raw   *paje.Parser
	stage tracecast.Processor
	next  int   // index of the next line
	off   int64 // byte offset after it
	out   []tracecast.Prediction
}

func newFeeder(lb liveBench, eager bool) (*feeder, error) {
	env := component.Env{Pipeline: "bench-live", Logger: zerolog.Nop(), Stream: liveBenchTrace}
	f := &feeder{}
	var err error
	if eager {
		po := paje.DefaultOptions()
		po.Name, po.TimeUnit = liveBenchTrace, lb.pajeOptions().TimeUnit
		f.raw = paje.NewParser(po)
	} else {
		p, err := buildBuiltin[*component.Parser](component.KindParser, "paje", env, lb.pajeOptions())
		if err != nil {
			return nil, err
		}
		f.proc = p
	}
	if f.stage, err = buildBuiltin[tracecast.Processor](component.KindStage, "predict", env, lb.predictOptions()); err != nil {
		return nil, err
	}
	return f, nil
}

func (f *feeder) record(_ context.Context, b tracecast.Batch) error {
	if ps, ok := b.Items.([]tracecast.Prediction); ok {
		f.out = append(f.out, ps...)
	}
	return nil
}

func (f *feeder) toStage(ctx context.Context, b tracecast.Batch) error {
	return f.stage.Process(ctx, b, f.record)
}

// feed hands lines[f.next:end] over as one batch and returns the
// predictions that come out.
func (f *feeder) feed(ctx context.Context, lines [][]byte, end int) ([]tracecast.Prediction, error) {
	f.out = nil
	if f.raw != nil {
		for ; f.next < end; f.next++ {
			if err := f.raw.Line(bytes.TrimSuffix(lines[f.next], []byte("\n")), int64(f.next+1)); err != nil {
				return nil, err
			}
		}
		return f.out, f.eagerEmit(ctx)
	}
	batch := make([]tracecast.Line, 0, end-f.next)
	for ; f.next < end; f.next++ {
		f.off += int64(len(lines[f.next]))
		data := bytes.TrimSuffix(bytes.TrimSuffix(lines[f.next], []byte("\n")), []byte("\r"))
		batch = append(batch, tracecast.Line{Data: data, Num: int64(f.next + 1), End: f.off})
	}
	err := f.proc.Process(ctx, tracecast.Batch{Stream: liveBenchTrace, Items: batch}, f.toStage)
	return f.out, err
}

func (f *feeder) eagerEmit(ctx context.Context) error {
	es := f.raw.Take([]tracecast.Entity{})
	return f.toStage(ctx, tracecast.Batch{Stream: liveBenchTrace, Items: es, Watermark: f.raw.Watermark(), TypeWatermarks: f.raw.TypeWatermarks()})
}

// finish ends the input: what the parser and the stage flush.
func (f *feeder) finish(ctx context.Context) ([]tracecast.Prediction, error) {
	f.out = nil
	if f.raw != nil {
		if err := f.raw.Finish(); err != nil {
			return nil, err
		}
		if err := f.eagerEmit(ctx); err != nil {
			return nil, err
		}
	} else if err := f.proc.Flush(ctx, f.toStage); err != nil {
		return nil, err
	}
	err := f.stage.Flush(ctx, f.record)
	return f.out, err
}

func predictionIDs(ps []tracecast.Prediction) []string {
	ids := make([]string, len(ps))
	for i, p := range ps {
		ids[i] = p.ID
	}
	slices.Sort(ids)
	return ids
}

// attribute feeds the lines one at a time through the pipeline's paje
// parser and live predict stage and records after which line each
// prediction comes out.
//
// One line per call makes the stage re-sort the states it holds behind the
// watermark at every line (seconds for this trace, a minute under the race
// detector), so with chunk > 1 two parser+stage pairs run in lockstep: a
// probe takes chunk lines at a time; where it emits nothing the other pair
// takes the same chunk in one call, where it emits, the other pair takes
// that chunk one line at a time, which attributes each prediction to its
// line. The stage's state depends only on the lines read, not on how they
// were cut into calls (the live pipeline relies on it too); a chunk whose
// two feedings disagree is an error.
func attribute(ctx context.Context, lines [][]byte, lb liveBench, eager bool, chunk int) (*attribution, error) {
	a := &attribution{At: map[string]int{}}
	add := func(ps []tracecast.Prediction, at int) error {
		for _, p := range ps {
			if _, seen := a.At[p.ID]; seen {
				return fmt.Errorf("prediction %s emitted twice", p.ID)
			}
			a.At[p.ID] = at
			a.Order = append(a.Order, p)
		}
		return nil
	}
	exact, err := newFeeder(lb, eager)
	if err != nil {
		return nil, err
	}
	var probe *feeder
	if chunk > 1 {
		if probe, err = newFeeder(lb, eager); err != nil {
			return nil, err
		}
	}
	for i := 0; i < len(lines); {
		end := len(lines)
		var want []tracecast.Prediction
		if probe != nil {
			end = min(i+chunk, len(lines))
			if want, err = probe.feed(ctx, lines, end); err != nil {
				return nil, err
			}
			if len(want) == 0 {
				if got, err := exact.feed(ctx, lines, end); err != nil || len(got) > 0 {
					return nil, fmt.Errorf("lines %d-%d: %d predictions, none fed the same way (%v)", i+1, end, len(got), err)
				}
				i = end
				continue
			}
		}
		var got []tracecast.Prediction
		for ; i < end; i++ {
			ps, err := exact.feed(ctx, lines, i+1)
			if err != nil {
				return nil, err
			}
			if err := add(ps, i); err != nil {
				return nil, err
			}
			got = append(got, ps...)
		}
		if probe != nil && !slices.Equal(predictionIDs(got), predictionIDs(want)) {
			return nil, fmt.Errorf("lines up to %d: %d predictions fed line by line, %d fed at once", end, len(got), len(want))
		}
	}
	ps, err := exact.finish(ctx)
	if err != nil {
		return nil, err
	}
	if probe != nil {
		want, err := probe.finish(ctx)
		if err != nil {
			return nil, err
		}
		if !slices.Equal(predictionIDs(ps), predictionIDs(want)) {
			return nil, fmt.Errorf("end of input: %d predictions fed line by line, %d fed in chunks", len(ps), len(want))
		}
	}
	return a, add(ps, atStop)
}

// lineDue is when each line is due in the file, as an offset from the
// start of the append, for trace times in ms played at speed: a line is
// due at the latest time seen so far (StarPU's lines are not quite in time
// order); lines without a time (the header) are due with the next one.
func lineDue(lines [][]byte, speed float64) []time.Duration {
	due := make([]time.Duration, len(lines))
	lt := &paje.LineTimer{}
	t0, latest := math.NaN(), math.Inf(-1)
	for i, l := range lines {
		if t, ok := lt.Time(bytes.TrimSuffix(l, []byte("\n"))); ok {
			if math.IsNaN(t0) {
				t0 = t
			}
			latest = max(latest, t)
		}
		if !math.IsInf(latest, -1) {
			due[i] = time.Duration((latest - t0) / speed * float64(time.Millisecond))
		}
	}
	return due
}

// quantile is the nearest-rank q-quantile of sorted xs.
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// liveRun is the outcome of one live run.
type liveRun struct {
	Latency   []time.Duration // per line-completed prediction: arrival − write of its line
	ToStage   []time.Duration // the part up to the stage emitting it (emitted_at − write)
	Slow      []slowOne       // the slowest, for the table
	AtStop    int             // predictions completed by the end of input, received after the last line
	AtStopMax time.Duration   // the last of them, after the last line
	Writes    int             // appends to the file
	Reader    kafkago.ReaderStats
	Duration  time.Duration // from the first append to the last prediction
}

// slowOne is one measured prediction, for the table's slowest.
type slowOne struct {
	ID             string
	Nth            int // rank of arrival (1: the first prediction of the run)
	Total, ToStage time.Duration
}

// runLive does one live run: broker, pipeline, reader, paced appends.
func runLive(tb testing.TB, lines [][]byte, a *attribution, lb liveBench) (res liveRun) {
	tb.Helper()
	const topic = "tracecast.predictions"
	broker := kafkatest.Start(tb, 1, topic) // one partition: the reader sees everything
	path := filepath.Join(tb.TempDir(), "live.trace")
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	cfg := lb.config(tb, path, broker, topic)

	runCtx, stop := context.WithCancel(context.Background())
	runDone := make(chan error, 1)
	go func() { runDone <- Run(runCtx, cfg, RunOptions{}) }()
	var runErr error
	waited := false
	wait := func() error { // a graceful stop, then Run's result
		if !waited {
			stop()
			runErr, waited = <-runDone, true
		}
		return runErr
	}
	defer wait() // also when the run fails: no pipeline outlives it

	type arrival struct {
		id      string
		at      time.Time
		emitted time.Time
	}
	readCtx, stopRead := context.WithCancel(context.Background())
	defer stopRead()
	r := kafkago.NewReader(kafkago.ReaderConfig{Brokers: []string{broker}, Topic: topic, Partition: 0,
		MaxWait: lb.MaxWait, StartOffset: kafkago.FirstOffset})
	arrivals := make(chan arrival, len(a.At)+16)
	readErr := make(chan error, 1)
	go func() {
		defer close(arrivals)
		for {
			m, err := r.ReadMessage(readCtx)
			now := time.Now()
			if err != nil {
				if readCtx.Err() != nil {
					err = nil
				}
				readErr <- err
				return
			}
			var rec struct {
				ID        string    `json:"id"`
				EmittedAt time.Time `json:"emitted_at"`
			}
			if err := json.Unmarshal(m.Value, &rec); err != nil || rec.ID == "" {
				readErr <- fmt.Errorf("message %q: not a prediction (%v)", m.Value, err)
				return
			}
			arrivals <- arrival{id: rec.ID, at: now, emitted: rec.EmittedAt}
		}
	}()
	defer func() {
		stopRead()
		for range arrivals {
		}
		r.Close()
	}()
	defer func() { res.Reader = r.Stats() }() // before the reader closes

	// Append in trace time, recording when each line landed in the file.
	due := lineDue(lines, lb.Speed)
	written := make([]time.Time, len(lines))
	var buf []byte
	writes := 0
	start := time.Now()
	for i := 0; i < len(lines); {
		if wait := due[i] - time.Since(start); wait > 0 {
			time.Sleep(wait)
		}
		now := time.Since(start)
		j := i
		buf = buf[:0]
		for j < len(lines) && due[j] <= now {
			buf = append(buf, lines[j]...)
			j++
		}
		// The lines exist from the write on: with file notifications the
		// tail reads them while (or before) Write returns to this
		// goroutine, and a prediction can land before a clock read after it.
		at := time.Now()
		if _, err := f.Write(buf); err != nil {
			tb.Fatal(err)
		}
		for k := i; k < j; k++ {
			written[k] = at
		}
		writes++
		i = j
	}

	// Collect: first what the lines complete, then what only the end of
	// input (end_after) completes.
	res.Writes = writes
	wantLine := 0
	for _, at := range a.At {
		if at != atStop {
			wantLine++
		}
	}
	got := map[string]bool{}
	var stopped time.Time
	timeout := time.NewTimer(10 * time.Second)
	defer timeout.Stop()
	var last time.Time
	for len(got) < len(a.At) {
		if stopped.IsZero() && len(res.Latency) >= wantLine {
			// The last line is written: the tail ends the input when the
			// file has not grown for end_after, and the stage flushes the
			// last windows. (A stop would not: they are not final.)
			stopped = time.Now()
		}
		select {
		case ar, ok := <-arrivals:
			if !ok {
				tb.Fatalf("reader stopped: %v", <-readErr)
			}
			at, want := a.At[ar.id]
			if !want {
				tb.Fatalf("unexpected prediction %s", ar.id)
			}
			if got[ar.id] {
				tb.Fatalf("prediction %s received twice", ar.id)
			}
			got[ar.id] = true
			last = ar.at
			if at == atStop {
				if stopped.IsZero() {
					tb.Fatalf("prediction %s, expected only at the end of input, arrived before the stop", ar.id)
				}
				res.AtStop++
				res.AtStopMax = max(res.AtStopMax, ar.at.Sub(stopped))
				continue
			}
			if ar.at.Before(written[at]) {
				tb.Fatalf("prediction %s arrived before its completing line %d was written: the attribution is wrong", ar.id, at+1)
			}
			res.Latency = append(res.Latency, ar.at.Sub(written[at]))
			res.ToStage = append(res.ToStage, ar.emitted.Sub(written[at]))
			res.Slow = append(res.Slow, slowOne{ID: ar.id, Nth: len(got), Total: ar.at.Sub(written[at]), ToStage: ar.emitted.Sub(written[at])})
		case <-timeout.C:
			var missing []string
			for id := range a.At {
				if !got[id] {
					missing = append(missing, id)
				}
			}
			sort.Strings(missing)
			tb.Fatalf("%d of %d predictions never arrived, e.g. %s", len(missing), len(a.At), strings.Join(missing[:min(5, len(missing))], ", "))
		}
	}
	if err := wait(); err != nil {
		tb.Fatalf("pipeline: %v", err)
	}
	slices.SortFunc(res.Slow, func(x, y slowOne) int { return int(y.Total - x.Total) })
	res.Slow = res.Slow[:min(3, len(res.Slow))]
	res.Duration = last.Sub(start)
	return res
}

// BenchmarkLiveLatency measures, on the embedded StarPU trace appended in
// real time to a tailed file, the latency from the line that completes a
// prediction being written to the prediction arriving on the topic.
// Metrics: p50_ms, p99_ms, max_ms of that latency and the number of
// predictions measured. Run it once: go test -run '^$' -bench LiveLatency
// -benchtime 1x ./pipelines (tools/bench-live.sh); the knobs can be changed
// from the environment (liveBench.fromEnv). The table goes to standard
// output.
func BenchmarkLiveLatency(b *testing.B) {
	lb := defaultLiveBench().fromEnv(b)
	lines := demoTraceLines(b)
	a, err := attribute(context.Background(), lines, lb, false, attributeChunk)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var all, toStage []time.Duration
	var runs []liveRun
	for b.Loop() {
		res := runLive(b, lines, a, lb)
		runs = append(runs, res)
		all = append(all, res.Latency...)
		toStage = append(toStage, res.ToStage...)
	}
	slices.Sort(all)
	slices.Sort(toStage)
	p50, p99, mx := quantile(all, 0.50), quantile(all, 0.99), quantile(all, 1)
	var sb strings.Builder
	fmt.Fprintf(&sb, "live latency, line written → prediction on the topic (%d lines, %d runs, speed %gx, tail poll %s, sink batch_timeout %s, reader MaxWait %s)\n",
		len(lines), len(runs), lb.Speed, lb.Poll, lb.BatchTimeout, lb.MaxWait)
	fmt.Fprintf(&sb, "  %-28s %6s %9s %9s %9s\n", "segment", "count", "p50 ms", "p99 ms", "max ms")
	fmt.Fprintf(&sb, "  %-28s %6d %9.2f %9.2f %9.2f\n", "line → stage emits", len(toStage), ms(quantile(toStage, .5)), ms(quantile(toStage, .99)), ms(quantile(toStage, 1)))
	fmt.Fprintf(&sb, "  %-28s %6d %9.2f %9.2f %9.2f\n", "line → on the topic (end-end)", len(all), ms(p50), ms(p99), ms(mx))
	for i, r := range runs {
		fmt.Fprintf(&sb, "  run %d: %d appends, %d predictions measured + %d completed by the end of input (all in %.1f ms after the last line was read), %.1f s\n",
			i+1, r.Writes, len(r.Latency), r.AtStop, ms(r.AtStopMax), r.Duration.Seconds())
		fmt.Fprintf(&sb, "    reader: %d fetches, %d dials, %d errors\n", r.Reader.Fetches, r.Reader.Dials, r.Reader.Errors)
		for _, sl := range r.Slow {
			fmt.Fprintf(&sb, "    slow: %s (arrival #%d) %.2f ms, of which %.2f ms to the stage\n", sl.ID, sl.Nth, ms(sl.Total), ms(sl.ToStage))
		}
	}
	if len(all) < 100 {
		fmt.Fprintf(&sb, "  (%d measured: p99 is the maximum; -benchtime Nx runs N times)\n", len(all))
	}
	fmt.Print(sb.String()) // b.Log would truncate it
	b.ReportMetric(ms(p50), "p50_ms")
	b.ReportMetric(ms(p99), "p99_ms")
	b.ReportMetric(ms(mx), "max_ms")
	b.ReportMetric(float64(len(all))/float64(max(len(runs), 1)), "predictions")
}

// TestLiveLatencyAttribution checks the benchmark's offline attribution:
// every prediction the live stage makes on the trace fed line by line has a
// completing line, completing lines never go back with window order, and
// the predictions are those of the offline predict stage on the whole
// trace.
func TestLiveLatencyAttribution(t *testing.T) {
	lb := defaultLiveBench()
	lines := demoTraceLines(t)
	a, err := attribute(t.Context(), lines, lb, false, attributeChunk)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Order) == 0 || len(a.At) != len(a.Order) {
		t.Fatalf("%d predictions, %d distinct ids", len(a.Order), len(a.At))
	}
	byLine, last, lastWindow := 0, -1, int64(-1)
	for _, p := range a.Order {
		at := a.At[p.ID]
		if at == atStop {
			last = len(lines) // the end of input comes after every line
		} else {
			byLine++
			if at < 0 || at >= len(lines) {
				t.Fatalf("prediction %s: line index %d out of range", p.ID, at)
			}
			if at < last {
				t.Fatalf("prediction %s (window %d) completed by line %d, before window %d's line %d", p.ID, p.Window, at, lastWindow, last)
			}
			last = at
		}
		if p.Window < lastWindow {
			t.Fatalf("prediction %s: window %d emitted after window %d", p.ID, p.Window, lastWindow)
		}
		lastWindow = p.Window
	}
	if byLine < 20 {
		t.Fatalf("only %d of %d predictions are completed by a line", byLine, len(a.Order))
	}

	// Exact, not merely an upper bound: the parser hands the stage a new
	// watermark only with entities, so a line that moves the watermark but
	// completes no entity could complete a prediction that the processor
	// lets out only at a later line (and a live batch holding both lines
	// would emit it "before" its line). Handing the stage the watermark
	// after every line attributes every prediction to the same line. And
	// the lockstep shortcut changes nothing. Both cross-checks are
	// single-goroutine and take ~10 s under the race detector: only
	// without it.
	if !testing.Short() && !raceEnabled() {
		eager, err := attribute(t.Context(), lines, lb, true, attributeChunk)
		if err != nil {
			t.Fatal(err)
		}
		sameAttribution(t, "watermark after every line", a, eager)
		naive, err := attribute(t.Context(), lines, lb, false, 1)
		if err != nil {
			t.Fatal(err)
		}
		sameAttribution(t, "one line per call throughout", a, naive)
	}

	// The same predictions as the offline stage on the finished trace.
	off, err := buildBuiltin[tracecast.Processor](component.KindStage, "predict", component.Env{Logger: zerolog.Nop()}, func() predict.StageConfig { o := lb.predictOptions(); o.Live = false; return o }())
	if err != nil {
		t.Fatal(err)
	}
	parser, err := buildBuiltin[*component.Parser](component.KindParser, "paje", component.Env{Logger: zerolog.Nop(), Stream: liveBenchTrace}, lb.pajeOptions())
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	collect := func(_ context.Context, b tracecast.Batch) error {
		if ps, ok := b.Items.([]tracecast.Prediction); ok {
			for _, p := range ps {
				want = append(want, p.ID)
			}
		}
		return nil
	}
	toStage := func(ctx context.Context, b tracecast.Batch) error { return off.Process(ctx, b, collect) }
	ls := make([]tracecast.Line, len(lines))
	for i, l := range lines {
		ls[i] = tracecast.Line{Data: bytes.TrimSuffix(l, []byte("\n")), Num: int64(i + 1)}
	}
	if err := parser.Process(t.Context(), tracecast.Batch{Stream: liveBenchTrace, Items: ls}, toStage); err != nil {
		t.Fatal(err)
	}
	if err := parser.Flush(t.Context(), toStage); err != nil {
		t.Fatal(err)
	}
	if err := off.Flush(t.Context(), collect); err != nil {
		t.Fatal(err)
	}
	got := make([]string, len(a.Order))
	for i, p := range a.Order {
		got[i] = p.ID
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("line by line: %d predictions; offline stage: %d; they differ", len(got), len(want))
	}
	t.Logf("%d lines, %d predictions: %d completed by a line, %d by the end of input", len(lines), len(a.Order), byLine, len(a.Order)-byLine)
}

func sameAttribution(t *testing.T, how string, a, b *attribution) {
	t.Helper()
	if len(a.At) != len(b.At) {
		t.Errorf("%s: %d predictions, not %d", how, len(b.At), len(a.At))
	}
	for id, at := range a.At {
		if bt, ok := b.At[id]; !ok || bt != at {
			t.Errorf("prediction %s: completed by line %d; %s: by line %d (present: %v)", id, at, how, bt, ok)
		}
	}
}

// raceEnabled reports whether the test binary was built with -race.
func raceEnabled() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

// buildBuiltin constructs a built-in component from its config, as the
// runtime does.
func buildBuiltin[T any, O any](kind component.Kind, name string, env component.Env, opts O) (T, error) {
	var zero T
	e, ok := builtin.Registry().Lookup(kind, name)
	if !ok {
		return zero, fmt.Errorf("no %s %q", kind, name)
	}
	v, err := e.Build(env, &opts)
	if err != nil {
		return zero, err
	}
	return v.(T), nil
}
