package csv

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"io"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/tracecast/tracecast"
)

// refWrite writes es with encoding/csv, as the Writer did before it
// formatted rows itself: the reference its bytes are checked against.
func refWrite(w io.Writer, es []tracecast.Entity) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(Header); err != nil {
		return err
	}
	r := make([]string, len(Header))
	for i := range es {
		e := &es[i]
		clear(r)
		r[0], r[1], r[2] = e.Nature.String(), e.Container, e.Type
		r[3], r[4], r[5] = num(e.Start), num(e.End), num(e.End-e.Start)
		r[7] = e.Value
		switch e.Nature {
		case tracecast.NatureState:
			r[6] = strconv.Itoa(e.Imbrication)
		case tracecast.NatureVariable:
			r[7], r[8] = "", num(e.Number)
		case tracecast.NatureLink:
			r[9], r[10], r[11] = e.StartContainer(), e.EndContainer(), e.Key()
		}
		if len(e.Extra()) > 0 {
			m := make(map[string]string, len(e.Extra()))
			for _, f := range e.Extra() {
				m[f.Name] = f.Value
			}
			b, _ := json.Marshal(m)
			r[12] = string(b)
		}
		if err := cw.Write(r); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// entities is a mix of every nature with names that need quoting or not
// (commas, quotes, line ends, leading spaces, \., non-ASCII) and times of
// every size.
func entities(n int) []tracecast.Entity {
	names := []string{"CPU0", "", "a,b", `say "hi"`, "x\ny", "x\r", " lead", "\tlead", "\u00a0nbsp", `\.`, `\.x`, "é", "trail ", `"`, "Worker State"}
	r := rand.New(rand.NewPCG(7, 8))
	pick := func() string { return names[r.IntN(len(names))] }
	es := make([]tracecast.Entity, n)
	for i := range es {
		start := r.Float64() * float64(r.IntN(1e6))
		e := tracecast.Entity{Nature: tracecast.Nature(r.IntN(5)), Container: pick(), Type: pick(), Start: start, End: start + r.Float64(),
			Imbrication: r.IntN(4) - 1, Value: pick(), Number: r.NormFloat64() * 1e3,
			Ext: &tracecast.EntityExt{StartContainer: pick(), EndContainer: pick(), Key: pick()}}
		if r.IntN(10) == 0 {
			e.Ext.Extra = []tracecast.Field{{Name: "JobId", Value: pick()}, {Name: "<p>", Value: "&"}}
		}
		es[i] = e
	}
	return es
}

// TestWriterMatchesEncodingCSV: the Writer writes the bytes encoding/csv
// wrote, across its buffer's flushes, with or without rows.
func TestWriterMatchesEncodingCSV(t *testing.T) {
	for _, n := range []int{0, 1, 5000} {
		es := entities(n)
		var want, got bytes.Buffer
		if err := refWrite(&want, es); err != nil {
			t.Fatal(err)
		}
		w := NewWriter(&got)
		for i := 0; i < len(es); i += 777 {
			if err := w.Write(es[i:min(i+777, len(es))]); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			g, wl := bytes.Split(got.Bytes(), []byte{'\n'}), bytes.Split(want.Bytes(), []byte{'\n'})
			for i := range min(len(g), len(wl)) {
				if !bytes.Equal(g[i], wl[i]) {
					t.Fatalf("%d entities: line %d is %q, want %q", n, i+1, g[i], wl[i])
				}
			}
			t.Fatalf("%d entities: %d bytes, want %d", n, got.Len(), want.Len())
		}
	}
}

// BenchmarkWriter measures entity rows per second (the states --format
// csv output); BenchmarkEncodingCSV is the encoding/csv writer it replaced.
func BenchmarkWriter(b *testing.B) {
	es := benchEntities()
	b.ReportAllocs()
	w := NewWriter(io.Discard)
	for b.Loop() {
		if err := w.Write(es); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(es)), "ns/entity")
}

func BenchmarkEncodingCSV(b *testing.B) {
	es := benchEntities()
	b.ReportAllocs()
	for b.Loop() {
		if err := refWrite(io.Discard, es); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(es)), "ns/entity")
}

// benchEntities are StarPU-like: states and variables with millisecond
// times, plain names.
func benchEntities() []tracecast.Entity {
	r := rand.New(rand.NewPCG(1, 2))
	es := make([]tracecast.Entity, 1<<14)
	for i := range es {
		start := 1000 + float64(r.IntN(15000e6))/1e6
		end := start + float64(r.IntN(50e6))/1e6
		if i%3 == 0 {
			es[i] = tracecast.Entity{Nature: tracecast.NatureVariable, Container: "sched", Type: "Ready tasks", Start: start, End: end, Number: float64(r.IntN(300))}
		} else {
			es[i] = tracecast.Entity{Nature: tracecast.NatureState, Container: "CPU3", Type: "Worker State", Start: start, End: end, Imbrication: r.IntN(3), Value: "GEMM"}
		}
	}
	return es
}
