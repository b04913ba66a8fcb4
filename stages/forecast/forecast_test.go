package forecast_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/rs/zerolog"
	"github.com/tracecast/tracecast"
	fc "github.com/tracecast/tracecast/forecast"
	"github.com/tracecast/tracecast/parsers/paje"
	"github.com/tracecast/tracecast/pipelines"
	"github.com/tracecast/tracecast/pipelines/builtin"
	"github.com/tracecast/tracecast/pipelines/component"
)

// forecasts runs file → paje → forecast on path and returns the forecasts.
func forecasts(t *testing.T, path string, opts map[string]any) []tracecast.Forecast {
	t.Helper()
	var out []tracecast.Forecast
	reg := builtin.Registry()
	component.RegisterSinkValue(reg, "keep", pipelines.SinkFunc(func(_ context.Context, b tracecast.Batch) error {
		if fs, ok := b.Items.([]tracecast.Forecast); ok {
			out = append(out, fs...)
		}
		return nil
	}))
	o := map[string]any{"queries": []string{"idle>=25%", "idle>=1"}, "horizons": []string{"1ms", "10ms", "100ms"}, "every": "2ms", "run_id": "r"}
	for k, v := range opts {
		o[k] = v
	}
	spec := pipelines.Spec{Name: "t",
		Sources: []pipelines.Node{{ID: "trace", Type: "file", Options: map[string]any{"path": path}, Parser: &pipelines.Node{Type: "paje", Options: map[string]any{"ignore_incomplete_links": true}}}},
		Stages:  []pipelines.Node{{ID: "fc", Type: "forecast", Inputs: []string{"trace"}, Options: o}},
		Sinks:   []pipelines.Node{{ID: "keep", Type: "keep", Inputs: []string{"fc"}}}}
	cfg, err := spec.Config()
	if err != nil {
		t.Fatal(err)
	}
	if err := pipelines.Run(context.Background(), cfg, pipelines.RunOptions{Registry: reg, Logger: zerolog.Nop(), Embedded: true}); err != nil {
		t.Fatal(err)
	}
	return out
}

func readLines(t *testing.T, path string) [][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if filepath.Ext(path) == ".gz" {
		if r, err = gzip.NewReader(f); err != nil {
			t.Fatal(err)
		}
	}
	var lines [][]byte
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		lines = append(lines, append([]byte(nil), sc.Bytes()...))
	}
	return lines
}

// Cutting a time-sorted trace after any event leaves every forecast issued
// before the next event's time unchanged: forecasts are causal, whatever
// the reader's batches.
func TestCutTrace(t *testing.T) {
	for _, tc := range []struct {
		path, unit string
	}{
		{"../../testdata/smpi/jacobi-8.trace.gz", "s"},
		{"../../pipelines/testdata/starpu-cholesky-2cpu.trace.gz", "ms"},
	} {
		t.Run(filepath.Base(tc.path), func(t *testing.T) {
			full := forecasts(t, tc.path, nil)
			if len(full) < 1000 {
				t.Fatalf("%d forecasts", len(full))
			}
			byID := map[string]tracecast.Forecast{}
			for _, f := range full {
				byID[f.ID] = f
			}
			lines := readLines(t, tc.path)
			var lt paje.LineTimer
			lt.SetUnit(tc.unit)
			type ev struct {
				line int
				t    float64
			}
			var evs []ev
			for i, l := range lines {
				if s, ok := lt.Seconds(l); ok {
					evs = append(evs, ev{i, s})
				}
			}
			dir := t.TempDir()
			for _, c := range []int{len(evs) / 50, len(evs) / 7, len(evs) / 3, len(evs) / 2, 3 * len(evs) / 4, len(evs) - 2} {
				cut := filepath.Join(dir, "cut.trace")
				var b bytes.Buffer
				for _, l := range lines[:evs[c].line+1] {
					b.Write(l)
					b.WriteByte('\n')
				}
				if err := os.WriteFile(cut, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				next := evs[c+1].t
				part := forecasts(t, cut, nil)
				n := 0
				for _, f := range part {
					if f.IssuedAt >= next {
						continue
					}
					n++
					if g, ok := byID[f.ID]; !ok || !fc.Same(g, f) {
						t.Fatalf("cut after line %d (t=%g s): %+v\nfull trace: %+v", evs[c].line+1, evs[c].t, f, g)
					}
				}
				if n == 0 && c > len(evs)/10 {
					t.Fatalf("cut after line %d: no forecast to compare", evs[c].line+1)
				}
			}
		})
	}
}
