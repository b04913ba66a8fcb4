package arrow

import (
	"path/filepath"
	"testing"

	"github.com/tracecast/tracecast"
)

func TestSnake(t *testing.T) {
	for in, want := range map[string]string{"HorizonS": "horizon_s", "MissesInARow": "misses_in_a_row", "ID": "id",
		"AtLeast": "at_least", "PredictedAt": "predicted_at", "D": "d", "Start": "start"} {
		if got := snake(in); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
}

func TestStructTableRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.arrow")
	s, err := New(Options{Path: path, Tables: []Table{StructTable[tracecast.Prediction]("tracecast.prediction/1", nil)}})
	if err != nil {
		t.Fatal(err)
	}
	ps := []tracecast.Prediction{{ID: "t/w1/idle>=25%", Trace: "t", Window: 1, Start: 1, End: 2, HorizonS: 0.5, Class: "idle", Query: "idle>=25%", AtLeast: 3, R: 12, Likelihood: 0.75}}
	if err := s.Write(t.Context(), tracecast.Batch{Items: ps}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	cols := s.Schema().Fields()
	names := []string{}
	for _, c := range cols {
		names = append(names, c.Name)
	}
	want := []string{"id", "trace", "window", "start", "end", "horizon_s", "class", "query", "at_least", "r", "likelihood", "emitted_at"}
	if len(names) != len(want) {
		t.Fatalf("columns %v", names)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Fatalf("columns %v, want %v", names, want)
		}
	}
	r := arrowCheck(t, path)
	if len(r) != 1 || r[0].Rows != 1 || len(r[0].Columns) != len(want) {
		t.Fatalf("the JavaScript reader sees %+v", r)
	}
}
