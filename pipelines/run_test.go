package pipelines

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/klauspost/compress/gzip"
	"github.com/rs/zerolog"
	"go.uber.org/goleak"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/internal/logtest"
	"github.com/tracecast/tracecast/pipelines/component"
	"github.com/tracecast/tracecast/pipelines/progress"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// run parses yaml and runs it with the test registry.
func run(t *testing.T, ctx context.Context, yaml string, st *store, opts RunOptions) error {
	t.Helper()
	cfg, err := Parse([]byte(yaml), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	opts.Registry = testRegistry(st)
	return Run(ctx, cfg, opts)
}

// checkOrdered checks that the entities of each input (Type, set by the tag
// stage, or "E" straight from a parser) come with increasing Start, that each
// input's parser flush follows its data, and returns the count per input.
func checkOrdered(t *testing.T, ents []tracecast.Entity) map[string]int {
	t.Helper()
	last := map[string]float64{}
	flushed := map[string]bool{}
	count := map[string]int{}
	for i, e := range ents {
		switch e.Value {
		case "stage-flush":
			if i != len(ents)-1 {
				t.Errorf("stage flush at %d of %d: not last", i, len(ents))
			}
			continue
		case "flush":
			flushed[e.Type] = true
			continue
		}
		if flushed[e.Type] {
			t.Errorf("input %q: entity %v after the parser's flush", e.Type, e.Start)
		}
		if e.Start <= last[e.Type] {
			t.Fatalf("input %q: entity %v after %v: order lost", e.Type, e.Start, last[e.Type])
		}
		last[e.Type] = e.Start
		count[e.Type]++
	}
	for in := range count {
		if !flushed[in] {
			t.Errorf("input %q: no parser flush", in)
		}
	}
	return count
}

func TestRunDeliversEverythingInOrder(t *testing.T) {
	st := newStore()
	yaml := `version: 1
settings: {edge_capacity: 2, status_interval: 0s}
sources:
  a: {type: gen, count: 1000, batch: 7, parser: {type: num}}
  b: {type: gen, count: 500, batch: 13, parser: {type: num}}
stages:
  mid: {type: tag, inputs: [a, b]}
sinks:
  out: {type: capture, inputs: [mid]}
  rawA: {type: capture, inputs: [a]}
  slow: {type: capture, inputs: [b], delay: 100us}
`
	if err := run(t, t.Context(), yaml, st, RunOptions{}); err != nil {
		t.Fatal(err)
	}
	out := st.get("out")
	if got := checkOrdered(t, out.entities); got["a"] != 1000 || got["b"] != 500 || len(got) != 2 {
		t.Errorf("out got %v, want a:1000 b:500", got)
	}
	// Fan-out: a's records also reach rawA, b's reach slow, whole.
	if got := checkOrdered(t, st.get("rawA").entities); got["E"] != 1000 {
		t.Errorf("rawA got %v", got)
	}
	if got := checkOrdered(t, st.get("slow").entities); got["E"] != 500 {
		t.Errorf("slow got %v", got)
	}
	for _, id := range []string{"out", "rawA", "slow"} {
		if c := st.get(id).closes; c != 1 {
			t.Errorf("sink %s closed %d times", id, c)
		}
	}
}

// TestRecycle: a batch's items are given back to their producer once
// written or processed when every consumer is a sink or a stage that
// keeps nothing of them, once the last is done with it (fanned out, each
// consumer sees the batch as it was sent); to a stage or sink that may
// keep them, never.
func TestRecycle(t *testing.T) {
	for _, tc := range []struct {
		name, graph string
		want        int64
	}{
		{"forgetting sink", `
sinks:
  out: {type: capture, inputs: [a], forgets: true}`, 10},
		{"sink that may keep", `
sinks:
  out: {type: capture, inputs: [a]}`, 0},
		{"two sinks", `
sinks:
  out: {type: capture, inputs: [a], forgets: true}
  out2: {type: capture, inputs: [a], forgets: true, delay: 1ms}`, 10},
		{"two sinks, one may keep", `
sinks:
  out: {type: capture, inputs: [a], forgets: true}
  out2: {type: capture, inputs: [a]}`, 0},
		{"through a stage", `
stages:
  mid: {type: tag, inputs: [a]}
sinks:
  out: {type: capture, inputs: [mid], forgets: true}`, 0},
		{"to a stage that forgets", `
stages:
  mid: {type: tag, inputs: [a], forgets: true}
sinks:
  out: {type: capture, inputs: [mid]}`, 10},
		{"to a stage that forgets and a sink", `
stages:
  mid: {type: tag, inputs: [a], forgets: true}
sinks:
  out: {type: capture, inputs: [mid]}
  out2: {type: capture, inputs: [a], forgets: true}`, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := newStore()
			yaml := `version: 1
settings: {status_interval: 0s}
sources:
  a: {type: gen, count: 100, batch: 10, parser: {type: num, recycle: true}}` + tc.graph + "\n"
			if err := run(t, t.Context(), yaml, st, RunOptions{}); err != nil {
				t.Fatal(err)
			}
			if got := st.recycled.Load(); got != tc.want {
				t.Errorf("%d batches recycled, want %d", got, tc.want)
			}
			// 100 lines and the parser's flush (and the stage's).
			if n := len(st.get("out").entities); n < 101 {
				t.Errorf("out got %d entities, want 101 or more", n)
			}
			if out2 := st.get("out2"); strings.Contains(tc.graph, "out2: {type: capture, inputs: [a]") {
				if got := checkOrdered(t, out2.entities); got["E"] != 100 {
					t.Errorf("out2 got %v, want the 100 lines as sent", got)
				}
			}
		})
	}
}

func TestBackpressureBoundsBuffering(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newStore()
		yaml := `version: 1
settings: {edge_capacity: 3, status_interval: 0s}
sources:
  a: {type: gen, count: -1, batch: 1, parser: {type: num}}
sinks:
  out: {type: capture, inputs: [a], block: true}
`
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- run(t, ctx, yaml, st, RunOptions{}) }()
		// Everything blocks behind the sink: one batch in Write, three in
		// its queue, one in the parser's hands, three in the parser's queue.
		// The source, trying to send the ninth, is blocked too.
		synctest.Wait()
		const bound = 1 + 3 + 1 + 3
		if got := st.gen("a").emitted.Load(); got != bound {
			t.Errorf("source emitted %d batches behind a stuck sink, want exactly %d", got, bound)
		}
		time.Sleep(time.Hour)
		synctest.Wait()
		if got := st.gen("a").emitted.Load(); got != bound {
			t.Errorf("after an hour the source emitted %d batches, want still %d", got, bound)
		}
		// Graceful stop, then let the sink drain: nothing emitted is lost.
		cancel()
		close(st.release)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		emitted := int(st.gen("a").emitted.Load())
		if got := checkOrdered(t, st.get("out").entities); got["E"] != emitted || emitted < bound {
			t.Errorf("sink got %v, want all %d emitted", got, emitted)
		}
	})
}

func TestSoftStopDrainsFlushesAndCloses(t *testing.T) {
	dir := t.TempDir()
	arrowPath := filepath.Join(dir, "out.arrow")
	jsonlPath := filepath.Join(dir, "out.jsonl")
	synctest.Test(t, func(t *testing.T) {
		st := newStore()
		yaml := fmt.Sprintf(`version: 1
settings: {edge_capacity: 4, shutdown_timeout: 5s, status_interval: 0s}
sources:
  a: {type: gen, count: -1, batch: 5, every: 10ms, parser: {type: num}}
stages:
  mid: {type: tag, inputs: [a]}
sinks:
  out: {type: capture, inputs: [mid], delay: 1ms}
  archive: {type: arrow, inputs: [mid], path: %q, format: file}
  dump: {type: jsonl, inputs: [mid], path: %q}
`, arrowPath, jsonlPath)
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(time.Second, cancel)
		start := time.Now()
		if err := run(t, ctx, yaml, st, RunOptions{}); err != nil {
			t.Fatalf("graceful stop: %v", err)
		}
		if d := time.Since(start); d > time.Second+100*time.Millisecond {
			t.Errorf("stop took %v", d)
		}
		out := st.get("out")
		got := checkOrdered(t, out.entities)
		if got["a"] < 400 || out.closes != 1 {
			t.Errorf("capture got %v entities, closed %d times", got, out.closes)
		}
		// The Arrow file was finalised: footer written, renamed from .tmp,
		// holding exactly what the other sinks got.
		f, err := os.Open(arrowPath)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		r, err := ipc.NewFileReader(f)
		if err != nil {
			t.Fatalf("arrow file not finalised: %v", err)
		}
		defer r.Close()
		rows := 0
		for i := range r.NumRecords() {
			rec, err := r.Record(i)
			if err != nil {
				t.Fatal(err)
			}
			rows += int(rec.NumRows())
		}
		if rows != len(out.entities) {
			t.Errorf("arrow file has %d rows, capture %d", rows, len(out.entities))
		}
		if _, err := os.Stat(arrowPath + ".tmp"); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("temporary Arrow file left: %v", err)
		}
		data, err := os.ReadFile(jsonlPath)
		if err != nil {
			t.Fatal(err)
		}
		if n := bytes.Count(data, []byte("\n")); n != len(out.entities) {
			t.Errorf("jsonl has %d lines, capture %d", n, len(out.entities))
		}
	})
}

func TestHardStop(t *testing.T) {
	tests := []struct {
		name     string
		hardAt   time.Duration // close HardStop at; 0 = never
		softAt   time.Duration // cancel ctx at; 0 = never
		want     error
		wantTime time.Duration
	}{
		{"shutdown timeout", 0, time.Second, ErrShutdownTimeout, 6 * time.Second},
		{"second signal", 2 * time.Second, time.Second, ErrHardStop, 2 * time.Second},
		{"hard stop without soft stop", 3 * time.Second, 0, ErrHardStop, 3 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				st := newStore()
				// The sink never finishes a write on its own: only
				// cancellation ends the run.
				yaml := `version: 1
settings: {edge_capacity: 2, shutdown_timeout: 5s, status_interval: 0s}
sources:
  a: {type: gen, count: -1, batch: 5, every: 10ms, parser: {type: num}}
sinks:
  out: {type: capture, inputs: [a], block: true}
`
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				hard := make(chan struct{})
				if tt.softAt > 0 {
					time.AfterFunc(tt.softAt, cancel)
				}
				if tt.hardAt > 0 {
					time.AfterFunc(tt.hardAt, func() { close(hard) })
				}
				start := time.Now()
				err := run(t, ctx, yaml, st, RunOptions{HardStop: hard})
				if !errors.Is(err, tt.want) {
					t.Fatalf("err = %v, want %v", err, tt.want)
				}
				if d := time.Since(start); d != tt.wantTime {
					t.Errorf("Run returned after %v, want %v", d, tt.wantTime)
				}
				if c := st.get("out").closes; c != 1 {
					t.Errorf("sink closed %d times after a hard stop", c)
				}
			})
		})
	}
}

func TestComponentIgnoringCancellationIsAbandoned(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newStore()
		yaml := `version: 1
settings: {shutdown_timeout: 2s, status_interval: 0s}
sources:
  a: {type: gen, count: -1, batch: 5, every: 10ms, parser: {type: num}}
sinks:
  out: {type: capture, inputs: [a], ignore_ctx: true}
`
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(time.Second, cancel)
		start := time.Now()
		err := run(t, ctx, yaml, st, RunOptions{})
		if !errors.Is(err, ErrShutdownTimeout) || !strings.Contains(err.Error(), `sink "out" (capture)`) {
			t.Fatalf("err = %v", err)
		}
		if d := time.Since(start); d != time.Second+2*time.Second+hardStopGrace {
			t.Errorf("Run returned after %v", d)
		}
		// Let the stuck write finish so the abandoned goroutines end.
		close(st.release)
		synctest.Wait()
	})
}

func TestComponentFailureCancelsGraph(t *testing.T) {
	tests := []struct {
		name    string
		source  string
		parser  string
		stage   string
		sink    string
		wantErr string
	}{
		{"source error", "fail_at: 4", "", "", "", `source "a" (gen): gen failed`},
		{"parser error", "", "fail_at: 50", "", "", `parser "a" (num): a:50: bad line`},
		{"stage error", "", "", "fail_at: 3", "", `stage "mid" (tag): boom`},
		{"sink error", "", "", "", "fail_at: 2", `sink "out" (capture): disk full`},
		{"parser panic", "", "panic_at: 20", "", "", `parser "a" (num): panic: kaboom`},
		{"stage panic", "", "", "panic_at: 2", "", `stage "mid" (tag): panic: stage kaboom`},
		{"sink panic", "", "", "", "panic_at: 3", `sink "out" (capture): panic: sink kaboom`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				st := newStore()
				yaml := fmt.Sprintf(`version: 1
settings: {status_interval: 0s}
sources:
  a: {type: gen, count: -1, batch: 5, every: 1ms, %s, parser: {type: num, %s}}
stages:
  mid: {type: tag, inputs: [a], %s}
sinks:
  out: {type: capture, inputs: [mid], %s}
  other: {type: capture, inputs: [a]}
`, orNone(tt.source), orNone(tt.parser), orNone(tt.stage), orNone(tt.sink))
				var logs logtest.Buffer
				err := run(t, t.Context(), yaml, st, RunOptions{Logger: zerolog.New(&logs)})
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				for _, id := range []string{"out", "other"} {
					if c := st.get(id).closes; c != 1 {
						t.Errorf("sink %s closed %d times", id, c)
					}
				}
				if strings.Contains(tt.name, "panic") && !strings.Contains(logs.String(), `"stack"`) {
					t.Errorf("panic logged without its stack: %s", logs.String())
				}
			})
		})
	}
}

// orNone fills an empty flow-mapping entry with a no-op option that every
// fake has.
func orNone(s string) string {
	if s == "" {
		return "fail_at: 0"
	}
	return s
}

func TestBuildFailures(t *testing.T) {
	dir := t.TempDir()
	st := newStore()
	out := filepath.Join(dir, "out.jsonl")
	yaml := fmt.Sprintf(`version: 1
sources:
  trace: {type: file, path: %q}
sinks:
  out: {type: jsonl, inputs: [trace], path: %q}
`, filepath.Join(dir, "missing.trace"), out)
	err := run(t, t.Context(), yaml, st, RunOptions{})
	if err == nil || !strings.Contains(err.Error(), `source "trace" (file): file source: stat `) {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed start created the sink's output: %v", err)
	}

	// A sink that cannot be created closes those created before it.
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	yaml = fmt.Sprintf(`version: 1
sources:
  a: {type: gen}
sinks:
  first: {type: capture, inputs: [a]}
  bad: {type: jsonl, inputs: [a], path: %q}
`, filepath.Join(blocker, "dir.jsonl"))
	err = run(t, t.Context(), yaml, st, RunOptions{})
	if err == nil || !strings.Contains(err.Error(), `sink "bad" (jsonl): `) {
		t.Fatalf("err = %v", err)
	}
	if c := st.get("first").closes; c != 1 {
		t.Errorf("sink built before the failure closed %d times", c)
	}

	var ce *ConfigError
	cfg, _ := Parse([]byte("version: 1\nsources: {a: {type: nope}}\nsinks: {o: {type: capture, inputs: [a]}}\n"), "x.yaml")
	if err := Run(t.Context(), cfg, RunOptions{Registry: testRegistry(st)}); !errors.As(err, &ce) {
		t.Errorf("unknown type at Run: %v", err)
	}
}

func TestProgressAndStatus(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newStore()
		yaml := `version: 1
settings: {status_interval: 2s}
sources:
  a: {type: gen, count: 1000, batch: 10, every: 100ms, parser: {type: num}}
sinks:
  out: {type: capture, inputs: [a]}
`
		logs := &logtest.Buffer{}
		var snaps []progress.Snapshot
		err := run(t, t.Context(), yaml, st, RunOptions{
			Logger:           zerolog.New(logs),
			Progress:         func(s progress.Snapshot) { snaps = append(snaps, s) },
			ProgressInterval: time.Second,
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(snaps) != 11 {
			t.Fatalf("%d snapshots over 10 s at 1 s, want 10 + the final one", len(snaps))
		}
		for i, s := range snaps[:10] {
			if s.Done || s.Total != 1000 || s.Bytes != int64(100*(i+1))-10 && s.Bytes != int64(100*(i+1)) {
				t.Errorf("snapshot %d: %+v", i, s)
			}
		}
		mid := snaps[4]
		if mid.Rate < 90 || mid.Rate > 110 || mid.ETA < 4*time.Second || mid.ETA > 6*time.Second {
			t.Errorf("halfway: rate %.1f/s ETA %v, want about 100/s and 5s", mid.Rate, mid.ETA)
		}
		last := snaps[10]
		if !last.Done || last.Bytes != 1000 || last.Lines != 1000 || last.Records != 1001 {
			t.Errorf("final snapshot %+v", last)
		}
		var status int
		for _, line := range strings.Split(logs.String(), "\n") {
			if !strings.Contains(line, `"message":"status"`) {
				continue
			}
			status++
			for _, want := range []string{`"sources":{"a":{"bytes":`, `"total":1000`, `"lines":`, `"records":`,
				`"records_per_s":`, `"queues":{"a.parser":"`, `"out":"0/16"`} {
				if !strings.Contains(line, want) && !(want == `"out":"0/16"` && strings.Contains(line, `"out":"`)) {
					t.Errorf("status line %s lacks %s", line, want)
				}
			}
		}
		if status != 5 {
			t.Errorf("%d status lines over 10 s at 2 s, want 5:\n%s", status, logs.String())
		}
	})
}

func writeGzipLines(t *testing.T, path string, n int) {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	for i := range n {
		fmt.Fprintf(zw, "%d\n", i)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestFileSourceEndToEnd(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "trace.gz")
	writeGzipLines(t, trace, 5000)
	st := newStore()
	yaml := fmt.Sprintf(`version: 1
sources:
  trace:
    type: file
    path: %q
    batch_lines: 100
    parser: {type: num}
sinks:
  out: {type: capture, inputs: [trace]}
  live: {type: arrow, inputs: [trace], path: %q, format: stream}
  lines: {type: jsonl, inputs: [trace], path: %q}
`, trace, filepath.Join(dir, "out.arrows"), filepath.Join(dir, "out.jsonl"))
	if err := run(t, t.Context(), yaml, st, RunOptions{}); err != nil {
		t.Fatal(err)
	}
	out := st.get("out")
	if got := checkOrdered(t, out.entities); got["E"] != 5000 {
		t.Errorf("got %v", got)
	}
	// The parser received the source's stream name (the path).
	if out.entities[0].Container != trace || out.entities[len(out.entities)-1].Container != trace {
		t.Errorf("stream name %q", out.entities[0].Container)
	}
	data, err := os.ReadFile(filepath.Join(dir, "out.jsonl"))
	if err != nil || bytes.Count(data, []byte("\n")) != 5001 {
		t.Errorf("jsonl: %d lines, %v", bytes.Count(data, []byte("\n")), err)
	}
}

func TestFileSourcePacedByParserTimestamps(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "trace")
	var sb strings.Builder
	for i := range 101 {
		sb.WriteString(strconv.Itoa(i * 100)) // 0..10000 ms
		sb.WriteByte('\n')
	}
	if err := os.WriteFile(trace, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	synctest.Test(t, func(t *testing.T) {
		st := newStore()
		yaml := fmt.Sprintf(`version: 1
settings: {status_interval: 0s}
sources:
  trace: {type: file, path: %q, speed: 2x, time_unit: ms, parser: {type: num}}
sinks:
  out: {type: capture, inputs: [trace]}
`, trace)
		start := time.Now()
		if err := run(t, t.Context(), yaml, st, RunOptions{}); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d != 5*time.Second {
			t.Errorf("10 s of trace at 2x took %v, want 5s", d)
		}
		if n := len(st.get("out").entities); n != 102 {
			t.Errorf("%d entities", n)
		}
	})
}

func TestWithSignals(t *testing.T) {
	ctx, hard, stop := WithSignals(t.Context(), zerolog.Nop())
	defer stop()
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("first SIGINT did not cancel the context")
	}
	select {
	case <-hard:
		t.Fatal("hard stop after one signal")
	default:
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-hard:
	case <-time.After(5 * time.Second):
		t.Fatal("second signal did not close hard")
	}
	stop()
}

// TestBarriers: a checkpoint barrier completes once every sink on every
// path holds everything emitted before it; a sink durable only on close
// holds it until Close; after a sink failure it never completes.
func TestBarriers(t *testing.T) {
	const graph = `version: 1
settings: {edge_capacity: 2, status_interval: 0s}
sources:
  a: {type: gen, count: 100, batch: 10, barrier_every: 2, parser: {type: num}}
stages:
  mid: {type: tag, inputs: [a]}
sinks:
  out: {type: capture, inputs: [mid], delay: 200us}
  raw: {type: capture, inputs: [a]%s}
`
	t.Run("after every sink", func(t *testing.T) {
		st := newStore()
		if err := run(t, t.Context(), fmt.Sprintf(graph, ""), st, RunOptions{}); err != nil {
			t.Fatal(err)
		}
		if len(st.barriers) != 5 {
			t.Fatalf("%d barriers completed, want 5", len(st.barriers))
		}
		for _, b := range st.barriers {
			for id, c := range b.sinks {
				if len(c.entities) < b.lines {
					t.Errorf("barrier after %d lines completed when sink %s held %d", b.lines, id, len(c.entities))
				}
			}
		}
	})
	t.Run("on close", func(t *testing.T) {
		st := newStore()
		if err := run(t, t.Context(), fmt.Sprintf(graph, ", on_close: true"), st, RunOptions{}); err != nil {
			t.Fatal(err)
		}
		if len(st.barriers) != 5 {
			t.Fatalf("%d barriers completed, want 5", len(st.barriers))
		}
		for _, b := range st.barriers {
			if b.sinks["raw"].closes != 1 {
				t.Errorf("barrier after %d lines completed before the on-close sink closed", b.lines)
			}
		}
	})
	t.Run("gathering sink", func(t *testing.T) {
		// A Flusher's Write only gathers: a barrier completes once it
		// flushed what came before, and everything is flushed in the end.
		st := newStore()
		if err := run(t, t.Context(), fmt.Sprintf(graph, ", gather: true, delay: 1ms"), st, RunOptions{}); err != nil {
			t.Fatal(err)
		}
		if len(st.barriers) != 5 {
			t.Fatalf("%d barriers completed, want 5", len(st.barriers))
		}
		for _, b := range st.barriers {
			if got := len(b.sinks["raw"].entities); got < b.lines {
				t.Errorf("barrier after %d lines completed when the gathering sink had flushed %d", b.lines, got)
			}
		}
		raw := st.get("raw")
		if len(raw.entities) != 101 || raw.flushes == 0 { // 100 lines and the parser's flush
			t.Fatalf("gathering sink: %d entities in %d flushes", len(raw.entities), raw.flushes)
		}
	})
	t.Run("sink failure", func(t *testing.T) {
		st := newStore()
		if err := run(t, t.Context(), fmt.Sprintf(graph, ", fail_at: 3"), st, RunOptions{}); err == nil {
			t.Fatal("no error")
		}
		for _, b := range st.barriers {
			if b.lines > 20 {
				t.Errorf("barrier after %d lines completed though sink raw failed at its third batch", b.lines)
			}
		}
	})
}

// TestMemoryLimitSetting: settings.memory_limit is the process's soft
// memory limit while the pipeline runs (unless GOMEMLIMIT is set), and the
// previous one afterwards.
func TestMemoryLimitSetting(t *testing.T) {
	if os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("GOMEMLIMIT is set: it wins over the setting")
	}
	before := debug.SetMemoryLimit(-1)
	var during int64
	cfg, err := Parse([]byte(`version: 1
settings: {memory_limit: 3GiB, status_interval: 0s}
sources:
  a: {type: gen, count: 10, batch: 5, parser: {type: num}}
sinks:
  out: {type: probe, inputs: [a]}
`), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sink := SinkFunc(func(context.Context, tracecast.Batch) error {
		during = debug.SetMemoryLimit(-1)
		return nil
	})
	reg := testRegistry(newStore())
	component.RegisterSinkValue(reg, "probe", sink)
	if err := Run(t.Context(), cfg, RunOptions{Registry: reg}); err != nil {
		t.Fatal(err)
	}
	if during != 3<<30 {
		t.Errorf("limit while running %d, want 3 GiB", during)
	}
	if after := debug.SetMemoryLimit(-1); after != before {
		t.Errorf("limit after %d, want the previous %d", after, before)
	}
	// An explicit one (a command's --memory-limit) wins; a bad one is an
	// error before anything runs.
	if err := Run(t.Context(), cfg, RunOptions{Registry: reg, MemoryLimit: "512MiB"}); err != nil {
		t.Fatal(err)
	}
	if during != 512<<20 {
		t.Errorf("limit while running %d, want the explicit 512 MiB", during)
	}
	if err := Run(t.Context(), cfg, RunOptions{Registry: reg, MemoryLimit: "lots"}); err == nil || !strings.Contains(err.Error(), "--memory-limit") {
		t.Errorf("a bad explicit limit: %v", err)
	}
}

// TestGatheringSinkFlushesAfterControl: records a Flusher gathered leave
// once its queue is empty, also when the last envelope before the pause
// is a control batch (a trace's end) or records of a type it does not
// keep. They waited for the next accepted write before: a live
// pipeline's predictions reached the topic up to a second late.
func TestGatheringSinkFlushesAfterControl(t *testing.T) {
	for _, last := range []tracecast.Batch{
		{Stream: "s", Items: tracecast.StreamEnd{}},
		{Stream: "s", Items: tracecast.StreamDrop{}},
	} {
		t.Run(fmt.Sprintf("%T", last.Items), func(t *testing.T) {
			st := newStore()
			st.sinks["out"] = &captured{}
			sink := &captureSink{id: "out", o: captureOptions{Gather: true}, st: st}
			n := &node{id: "out", kind: component.KindSink, typ: "capture", log: zerolog.Nop(),
				in: make(chan envelope, 4), sink: sink}
			// Both envelopes are queued before the sink starts: the queue
			// is not empty after the records' Write.
			n.in <- envelope{b: tracecast.Batch{Stream: "s", Items: []tracecast.Entity{{Value: "a"}}}}
			n.in <- envelope{b: last}
			done := make(chan error, 1)
			go func() { done <- runSink(n, t.Context(), new(atomic.Bool)) }()
			deadline := time.Now().Add(5 * time.Second)
			for len(st.get("out").entities) == 0 && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
			got := st.get("out")
			close(n.in)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if len(got.entities) != 1 || got.flushes != 1 {
				t.Fatalf("with the queue empty after a %T, the gathered record was not flushed: %d entities in %d flushes", last.Items, len(got.entities), got.flushes)
			}
		})
	}
}
