package pipelines

import (
	"context"
	"fmt"
	"github.com/tracecast/tracecast/internal/promexport"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestParserBadLineMetrics: the power and iocall parsers, like Paje's,
// report their lines and, in lenient mode, the lines they skipped by
// reason, on a real scrape of a running pipeline.
func TestParserBadLineMetrics(t *testing.T) {
	dir := t.TempDir()
	power := filepath.Join(dir, "node0.watts.csv")
	if err := os.WriteFile(power, []byte("time,node,watts\n0.1,node0,91.6\nnot,a,sample\n0.2,node0,92.0\n0.3,node0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	strace := filepath.Join(dir, "dd.strace")
	if err := os.WriteFile(strace, []byte("1 10:00:00.0 close(9) = 0 <0.1>\n1 10:00:00.1 read(foo, \"x\", 1) = 1 <0.1>\n1 10:00:00.2 close(8) = 0 <0.1>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := Parse(fmt.Appendf(nil, `version: 1
name: lines
settings: {status_interval: 0s}
sources:
  power: {type: tail, path: %q, poll: 10ms, parser: {type: power, format: csv, lenient: true}}
  io: {type: tail, path: %q, poll: 10ms, parser: {type: iocall, format: strace, lenient: true}}
sinks:
  p: {type: jsonl, inputs: [power], path: %q}
  i: {type: jsonl, inputs: [io], path: %q}
`, power, strace, filepath.Join(dir, "p.jsonl"), filepath.Join(dir, "i.jsonl")), "lines.yaml")
	if err != nil {
		t.Fatal(err)
	}
	reg, h, scrape := metricsServer(t)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg, RunOptions{Metrics: promexport.Registry{Registerer: reg}, Health: h}) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	want := []struct {
		component, name string
		labels          []string
		value           float64
	}{
		{"power", "tracecast_lines_total", nil, 5},
		{"power", "tracecast_power_samples_total", nil, 2},
		{"io", "tracecast_lines_total", nil, 3},
		{"io", "tracecast_io_calls_total", nil, 2},
		{"io", "tracecast_bad_lines_total", []string{"reason", "bad arguments"}, 1},
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		sc := scrape()
		missing := ""
		for _, w := range want {
			kv := append([]string{"component", w.component, "kind", "parser"}, w.labels...)
			if v, ok := sc.get(t, w.name, kv...); !ok || v != w.value {
				missing = fmt.Sprintf("%s %v = %v (present: %v), want %v", w.name, kv, v, ok, w.value)
				break
			}
		}
		var powerBad float64
		for _, s := range sc.all("tracecast_bad_lines_total", "component", "power", "kind", "parser") {
			powerBad += s.value
		}
		if missing == "" && powerBad != 2 {
			missing = fmt.Sprintf("power bad_lines_total %v, want 2 (by reason)", powerBad)
		}
		if missing == "" {
			for _, s := range sc.all("tracecast_bad_lines_total") {
				t.Logf("%s %v", s.key(), s.value)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(missing)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
