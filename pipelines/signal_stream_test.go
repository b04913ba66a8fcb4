package pipelines

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/app/builtin"
	"github.com/tracecast/tracecast/pipelines/component"
	"github.com/tracecast/tracecast/stages/predict"
	"github.com/tracecast/tracecast/stages/signal"
	"github.com/tracecast/tracecast/stats/ks"
)

// sampled is a signal as a test compares it: its samples' count and hash
// (up to 10⁷ samples: not kept), and the first batch's metadata.
type sampled struct {
	n    int
	hash uint64
	meta map[string]string
	err  string
}

type sampleHash struct {
	s   *sampled
	buf [20]byte
	h   interface {
		Write([]byte) (int, error)
		Sum64() uint64
	}
}

func newSampleHash(s *sampled) *sampleHash { return &sampleHash{s: s, h: fnv.New64a()} }

func (sh *sampleHash) add(k int64, t float64, x int32) {
	binary.LittleEndian.PutUint64(sh.buf[0:], uint64(k))
	binary.LittleEndian.PutUint64(sh.buf[8:], math.Float64bits(t))
	binary.LittleEndian.PutUint32(sh.buf[16:], uint32(x))
	sh.h.Write(sh.buf[:])
	sh.s.n++
}

// signalNode is a signal stage reading "trace".
func signalNode(class string, period float64, maxSamples int) Node {
	return Node{ID: "sig", Type: "signal", Inputs: []string{"trace"}, Options: map[string]any{"class": class, "period": period, "max_samples": maxSamples}}
}

func traceNode(path string) Node {
	return Node{ID: "trace", Type: "file", Options: map[string]any{"path": path}, Parser: &Node{Type: "paje"}}
}

// runSpecWith runs spec with the built-ins and sinks, logging to log.
func runSpecWith(ctx context.Context, spec Spec, sinks map[string]tracecast.Sink, log zerolog.Logger) error {
	reg := builtin.Registry()
	for name, s := range sinks {
		component.RegisterSinkValue(reg, name, s)
	}
	spec.Settings = map[string]any{"status_interval": "0s"}
	cfg, err := spec.Config()
	if err != nil {
		return err
	}
	return Run(ctx, cfg, RunOptions{Registry: reg, Logger: log, Embedded: true})
}

// streamedSignal is the signal stage's output, read as the pipeline runs
// it (two passes over a file).
func streamedSignal(t *testing.T, path, class string, period float64, maxSamples int, log zerolog.Logger) sampled {
	t.Helper()
	var s sampled
	sh := newSampleHash(&s)
	sink := SinkFunc(func(_ context.Context, b tracecast.Batch) error {
		if s.meta == nil {
			s.meta = b.Meta
		}
		for _, x := range b.Items.([]tracecast.Sample) {
			sh.add(x.K, x.T, x.X)
		}
		return nil
	})
	err := runSpecWith(t.Context(), Spec{Name: "signal", Sources: []Node{traceNode(path)}, Stages: []Node{signalNode(class, period, maxSamples)},
		Sinks: []Node{{ID: "out", Type: "out", Inputs: []string{"sig"}}}}, map[string]tracecast.Sink{"out": sink}, log)
	if err != nil {
		s.err = err.Error()
	}
	s.hash = sh.h.Sum64()
	return s
}

// collected reads every entity of a trace into a Collector: the whole
// signal, as the signal stage made it before it streamed.
func collected(t *testing.T, path string) (*signal.Collector, error) {
	t.Helper()
	col, err := signal.NewCollector("auto")
	if err != nil {
		t.Fatal(err)
	}
	sink := SinkFunc(func(ctx context.Context, b tracecast.Batch) error { return col.Process(ctx, b, nil) })
	err = runSpecWith(t.Context(), Spec{Name: "whole", Sources: []Node{traceNode(path)}, Sinks: []Node{{ID: "col", Type: "col", Inputs: []string{"trace"}}}},
		map[string]tracecast.Sink{"col": sink}, zerolog.Nop())
	return col, err
}

func wholeSignal(t *testing.T, col *signal.Collector, class string, period float64, maxSamples int) sampled {
	t.Helper()
	var s sampled
	sh := newSampleHash(&s)
	sig, rules, period, unit, err := col.Build(component.Env{Logger: zerolog.Nop()}, class, tracecast.TraceUnits(period), tracecast.TraceTime{}, maxSamples, "")
	if err != nil {
		s.err = err.Error()
		return s
	}
	c, _ := signal.ParseClass(class)
	s.meta = signal.Meta(sig, rules, c, period, unit)
	sig.Sample(c, period, func(k int, t float64, x int) { sh.add(int64(k), t, int32(x)) })
	s.hash = sh.h.Sum64()
	return s
}

// signalTraces are the traces the streamed signal is checked on: the
// repository's, a trace whose states come later than the parser's reorder
// horizon, and ../shared's when present. The race detector makes the
// reader 5 to 10 times slower: under it, the plain traces of the
// repository only (the concurrency is the same).
func signalTraces(t *testing.T) []string {
	traces, _ := filepath.Glob(filepath.Join("..", "testdata", "smpi", "*.trace"))
	traces = append(traces, lateTrace(t))
	if raceEnabled() {
		return traces
	}
	gz, _ := filepath.Glob(filepath.Join("..", "testdata", "smpi", "*.trace.gz"))
	traces = append(append(traces, gz...), filepath.Join("testdata", "starpu-cholesky-2cpu.trace.gz"))
	shared := filepath.Join("..", "..", "shared", "traces")
	if _, err := os.Stat(shared); err != nil {
		t.Logf("%s is absent: the streamed signal is checked on the repository's traces only", shared)
		return traces
	}
	filepath.Walk(shared, func(path string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() && strings.Contains(fi.Name(), ".trace") {
			traces = append(traces, path)
		}
		return nil
	})
	return traces
}

// lateTrace writes an SMPI trace where rank-1's states come after rank-0's
// reached 60 s (many batches later), later than the parser's 3 s reorder
// horizon: its states start before the watermark already published.
func lateTrace(t *testing.T) string {
	data, err := os.ReadFile(filepath.Join("..", "testdata", "smpi", "ring-4.trace"))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for _, l := range strings.SplitAfter(string(data), "\n") {
		if strings.HasPrefix(l, "12 ") {
			break
		}
		b.WriteString(l)
	}
	for i := range 6000 {
		fmt.Fprintf(&b, "12 %.6f 2 1 7\n13 %.6f 2 1\n", float64(i)*0.01, float64(i)*0.01+0.005)
	}
	b.WriteString("12 1.000000 2 2 8\n13 2.500000 2 2\n12 60.000000 2 3 8\n13 61.000000 2 3\n")
	path := filepath.Join(t.TempDir(), "late.trace")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// The signal stage reads a file twice (a survey, then samples from the
// parser's watermark) and makes the signal of every state kept, sample for
// sample, with its metadata and errors; a trace the watermark does not
// hold for is sampled whole, with a warning.
func TestSignalStreamedIsWhole(t *testing.T) {
	for _, path := range signalTraces(t) {
		t.Run(filepath.Base(filepath.Dir(path))+"/"+filepath.Base(path), func(t *testing.T) {
			maxSamples := 10_000_000
			if strings.Contains(path, "shared") || strings.HasSuffix(path, ".gz") {
				maxSamples = 200_000 // the whole signal's cost, not the stream's
			}
			col, err := collected(t, path)
			for _, class := range []string{"idle", "compute"} {
				for _, period := range []float64{0, 0.5} {
					var logs bytes.Buffer
					got := streamedSignal(t, path, class, period, maxSamples, zerolog.New(zerolog.SyncWriter(&logs)))
					var want sampled
					if err != nil {
						want.err = err.Error()
					} else {
						want = wholeSignal(t, col, class, period, maxSamples)
					}
					if want.err != "" || got.err != "" {
						// The same reason, wherever it was found (the
						// first pass names its stage).
						if want.err == "" || got.err == "" || !strings.HasSuffix(got.err, want.err) {
							t.Fatalf("%s period %g: streamed error %q, whole %q", class, period, got.err, want.err)
						}
						continue
					}
					if got.n != want.n || got.hash != want.hash || fmt.Sprint(got.meta) != fmt.Sprint(want.meta) {
						t.Fatalf("%s period %g: streamed %d samples (hash %x, %v), whole %d (hash %x, %v)",
							class, period, got.n, got.hash, got.meta, want.n, want.hash, want.meta)
					}
					if late := strings.Contains(logs.String(), "late_states"); late != (filepath.Base(path) == "late.trace") {
						t.Errorf("%s period %g: late-state warning %v:\n%s", class, period, late, logs.String())
					}
				}
			}
		})
	}
}

// fifo serves data through a named pipe: a file source reads it once, as
// standard input.
func fifo(t *testing.T, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "trace.fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		f.Write(data)
		f.Close()
	}()
	t.Cleanup(func() {
		// Unblock the writer when the pipeline never opened the pipe.
		if f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
		<-done
	})
	return path
}

// Read once (a pipe, standard input), the signal stage needs a period; with
// one it samples online, R fixed at the first sample, which on traces whose
// containers are all declared first is the two-pass signal.
func TestSignalReadOnce(t *testing.T) {
	for _, name := range []string{"ring-4.trace", "stencil-16.trace"} {
		path := filepath.Join("..", "testdata", "smpi", name)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := streamedSignal(t, fifo(t, data), "idle", 0, 10_000_000, zerolog.Nop()); !strings.Contains(got.err, "period: required") {
			t.Fatalf("%s without a period, read once: error %q, want the period required", name, got.err)
		}
		for _, class := range []string{"idle", "compute"} {
			want := streamedSignal(t, path, class, 0.0005, 10_000_000, zerolog.Nop())
			got := streamedSignal(t, fifo(t, data), class, 0.0005, 10_000_000, zerolog.Nop())
			if got.err != "" || want.err != "" || got.n != want.n || got.hash != want.hash || got.meta["r"] != want.meta["r"] || got.meta["t0"] != want.meta["t0"] {
				t.Fatalf("%s %s read once: %d samples (hash %x, %v, %s), twice %d (hash %x, %v, %s)", name, class,
					got.n, got.hash, got.meta, got.err, want.n, want.hash, want.meta, want.err)
			}
		}
	}
}

// The predict stage (Pallipuram et al.'s (2014) windows) reads a file twice too, and makes
// the records of the prediction phase on the whole signal, in the same
// order.
func TestPredictStreamedIsWhole(t *testing.T) {
	traces := []string{filepath.Join("..", "testdata", "smpi", "stencil-16.trace"), lateTrace(t)}
	if !raceEnabled() {
		traces = append(traces, filepath.Join("testdata", "starpu-cholesky-2cpu.trace.gz"))
	}
	queries := []string{"idle>=25%", "compute>=2", "idle>=1"}
	for _, path := range traces {
		col, err := collected(t, path)
		if err != nil {
			t.Fatal(err)
		}
		sig, _, period, unit, err := col.Build(component.Env{Logger: zerolog.Nop()}, "idle", tracecast.TraceTime{}, tracecast.TraceTime{}, 100_000, "")
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		put := func(out *[]string, v any) { *out = append(*out, printRecord(v)) }
		var ws, ps, vs, as []string
		err = predict.Run(sig, predict.TraceID(path), period, tracecast.PerSecond(unit), predict.Options{Window: 20, Queries: queries,
			Method: ks.Matlab, Alpha: 0.05, IdleThreshold: 0.5, RegimeMisses: 2}, predict.Sink{
			Window: func(x tracecast.Window) { put(&ws, x) }, Prediction: func(x tracecast.Prediction) { put(&ps, x) },
			Verdict: func(x tracecast.Verdict) { put(&vs, x) }, Alert: func(x tracecast.Alert) { put(&as, x) }})
		if err != nil {
			t.Fatal(err)
		}
		want = append(append(append(ws, ps...), vs...), as...)
		var got []string
		sink := SinkFunc(func(_ context.Context, b tracecast.Batch) error {
			switch items := b.Items.(type) {
			case []tracecast.Window:
				for _, x := range items {
					put(&got, x)
				}
			case []tracecast.Prediction:
				for _, x := range items {
					put(&got, x)
				}
			case []tracecast.Verdict:
				for _, x := range items {
					put(&got, x)
				}
			case []tracecast.Alert:
				for _, x := range items {
					put(&got, x)
				}
			}
			return nil
		})
		node := Node{ID: "p", Type: "predict", Inputs: []string{"trace"}, Options: map[string]any{"window": 20, "queries": queries,
			"max_samples": 100_000, "idle_threshold": 0.5, "regime_misses": 2}}
		err = runSpecWith(t.Context(), Spec{Name: "predict", Sources: []Node{traceNode(path)}, Stages: []Node{node},
			Sinks: []Node{{ID: "out", Type: "out", Inputs: []string{"p"}}}}, map[string]tracecast.Sink{"out": sink}, zerolog.Nop())
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) || len(want) < 10 {
			t.Fatalf("%s: %d records streamed, %d whole", path, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s: record %d\nstreamed: %s\nwhole:    %s", path, i, got[i], want[i])
			}
		}
	}
}

// printRecord prints a record of the prediction phase without EmittedAt
// (the wall clock).
func printRecord(v any) string {
	switch x := v.(type) {
	case tracecast.Prediction:
		x.EmittedAt = time.Time{}
		v = x
	case tracecast.Verdict:
		x.EmittedAt = time.Time{}
		v = x
	case tracecast.Alert:
		x.EmittedAt = time.Time{}
		v = x
	}
	return fmt.Sprintf("%T %+v", v, v)
}
