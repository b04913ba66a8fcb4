package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/array"

	"github.com/tracecast/tracecast/internal/arrowtest"
)

// TestSignalParquet: signal -o FILE.parquet writes the samples the CSV
// output has, with the signal's metadata.
func TestSignalParquet(t *testing.T) {
	out := filepath.Join(t.TempDir(), "idle.parquet")
	if r := run(t, nil, "signal", "--period", "1", "-o", out, demoTrace); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	csv := run(t, nil, "signal", "--period", "1", "-o", "-", demoTrace)
	want := strings.Split(strings.TrimSpace(csv.stdout), "\n")[1:]

	p := arrowtest.ReadParquet(t, out)
	for k, v := range map[string]string{"tracecast.schema": "tracecast.signal/1", "period": "1", "class": "idle", "rules": "starpu", "r": "2"} {
		if got, ok := p.Meta.GetValue(k); !ok || got != v {
			t.Errorf("metadata %s = %q (%v), want %q", k, got, ok, v)
		}
	}
	tr := array.NewTableReader(p.Table, 0)
	defer tr.Release()
	var got []string
	for tr.Next() {
		rec := tr.Record()
		k, tm, x := rec.Column(0).(*array.Int64), rec.Column(1).(*array.Float64), rec.Column(2).(*array.Int32)
		for i := range int(rec.NumRows()) {
			got = append(got, fmt.Sprintf("%d,%v,%d", k.Value(i), tm.Value(i), x.Value(i)))
		}
	}
	if len(got) != len(want) || len(got) != 6968 {
		t.Fatalf("Parquet has %d samples, CSV %d, want 6968", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("sample %d: Parquet %s, CSV %s", i, got[i], want[i])
		}
	}
	if r := run(t, nil, "signal", "-o", "x.json", demoTrace); r.code != 2 || !strings.Contains(r.stderr, ".arrow, .parquet or .csv") {
		t.Errorf("unknown extension: exit %d %s", r.code, r.stderr)
	}
}
