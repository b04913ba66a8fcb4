package pjdump

import (
	"bytes"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/tracecast/tracecast"
)

// sampleEntities is a StarPU-like mix: states, variables, events, links and
// a few containers, with millisecond times of four to five digits.
func sampleEntities(n int) []tracecast.Entity {
	r := rand.New(rand.NewPCG(1, 2))
	es := make([]tracecast.Entity, n)
	for i := range es {
		start := 1000 + float64(r.IntN(15000e6))/1e6
		end := start + float64(r.IntN(50e6))/1e6
		switch k := r.IntN(100); {
		case k < 55:
			es[i] = tracecast.Entity{Nature: tracecast.NatureState, Container: "CUDA0_0", Type: "Worker State", Start: start, End: end, Imbrication: r.IntN(3), Value: "GEMM"}
		case k < 85:
			es[i] = tracecast.Entity{Nature: tracecast.NatureVariable, Container: "sched", Type: "Ready tasks", Start: start, End: end, Number: float64(r.IntN(300))}
		case k < 95:
			es[i] = tracecast.Entity{Nature: tracecast.NatureEvent, Container: "register", Type: "program event type", Start: start, End: start, Value: "56469e5708e0"}
		case k < 99:
			es[i] = tracecast.Entity{Nature: tracecast.NatureLink, Container: "program", Type: "F", Start: start, End: end, Value: "57600", Ext: &tracecast.EntityExt{StartContainer: "MEMMANAGER0", EndContainer: "MEMMANAGER1", Key: "com_1234"}}
		default:
			es[i] = tracecast.Entity{Nature: tracecast.NatureContainer, Container: "program", Type: "Worker", Start: 0, End: 16143.316747, Value: "CPU3"}
		}
	}
	return es
}

// TestWriterLines: the writer's output is AppendLine's, line by line,
// across its buffer's flushes, and an output error is returned.
func TestWriterLines(t *testing.T) {
	es := sampleEntities(5000)
	var want bytes.Buffer
	for i := range es {
		want.Write(AppendLine(nil, &es[i], false))
		want.WriteByte('\n')
	}
	got := writeAll(t, es, 777)
	if got != want.String() {
		t.Fatalf("output differs: %d bytes, want %d", len(got), want.Len())
	}
	w := NewWriter(failing{}, false)
	err := w.Write(es)
	if err == nil {
		err = w.Flush()
	}
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("got %v", err)
	}
}

// writeAll writes es through a Writer in batches of step (across its
// buffer's flushes) and returns what it wrote.
func writeAll(t *testing.T, es []tracecast.Entity, step int) string {
	t.Helper()
	var got bytes.Buffer
	w := NewWriter(&got, false)
	for i := 0; i < len(es); i += step {
		if err := w.Write(es[i:min(i+step, len(es))]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return got.String()
}

type failing struct{}

func (failing) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// BenchmarkWriter measures formatting and buffering of pj_dump lines.
func BenchmarkWriter(b *testing.B) {
	es := sampleEntities(1 << 14)
	var n int64
	for i := range es {
		n += int64(len(AppendLine(nil, &es[i], false)) + 1)
	}
	b.SetBytes(n)
	b.ReportAllocs()
	w := NewWriter(io.Discard, false)
	for b.Loop() {
		if err := w.Write(es); err != nil {
			b.Fatal(err)
		}
	}
	w.Flush()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(es)), "ns/entity")
}

// TestWriterEndReuse: a start equal to the pair's last end reuses that
// end's text, and only then: ends of every size and sign (long ones,
// which are not kept, and -0, which is not 0), starts equal to another
// pair's end, pairs that take each other's cache entry.
func TestWriterEndReuse(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	times := []float64{0, math.Copysign(0, -1), 1, 1.5, -2.25, 1e5, 123456.789012, 1e13 + 0.5, 1e15, 1e300, -1e300, math.Inf(1), math.NaN(), 4.0000005, 0.0000005}
	pairs := [][2]string{{"CPU0", "S"}, {"CPU1", "S"}, {"CPU0", "T"}}
	for j := range 100 {
		pairs = append(pairs, [2]string{"c" + strconv.Itoa(j), "t"})
	}
	last := map[[2]string]float64{}
	var es []tracecast.Entity
	for range 20000 {
		p := pairs[r.IntN(3)]
		if r.IntN(4) == 0 {
			p = pairs[r.IntN(len(pairs))]
		}
		start := times[r.IntN(len(times))]
		switch r.IntN(3) {
		case 0:
			start = last[p] // the pair's last end
		case 1:
			start = last[pairs[r.IntN(3)]] // maybe another pair's
		}
		end := times[r.IntN(len(times))] + float64(r.IntN(3))
		last[p] = end
		n := []tracecast.Nature{tracecast.NatureState, tracecast.NatureVariable, tracecast.NatureEvent, tracecast.NatureLink}[r.IntN(4)]
		es = append(es, tracecast.Entity{Nature: n, Container: p[0], Type: p[1], Start: start, End: end, Value: "v"})
	}
	var want []byte
	for i := range es {
		want = append(AppendLine(want, &es[i], false), '\n')
	}
	gl, wl := strings.Split(writeAll(t, es, 999), "\n"), strings.Split(string(want), "\n")
	for i := range min(len(gl), len(wl)) {
		if gl[i] != wl[i] {
			t.Fatalf("line %d: %q, want %q", i+1, gl[i], wl[i])
		}
	}
	if len(gl) != len(wl) {
		t.Fatalf("%d lines, want %d", len(gl), len(wl))
	}
}

// TestImbrication: a state's depth is printed as pj_dump prints it, a
// six-decimal number, on both paths (one digit and room in the buffer, or
// not).
func TestImbrication(t *testing.T) {
	for _, imb := range []int{0, 1, 9, 10, 11, 12345, -1, -10} {
		e := tracecast.Entity{Nature: tracecast.NatureState, Container: "c", Type: "S", Start: 1, End: 2, Imbrication: imb, Value: "v"}
		want := "State, c, S, 1.000000, 2.000000, 1.000000, " + strconv.FormatFloat(float64(imb), 'f', 6, 64) + ", v"
		for _, room := range []int{0, 64, 256} {
			if got := string(AppendLine(make([]byte, 0, room), &e, false)); got != want {
				t.Errorf("depth %d, room %d: %q, want %q", imb, room, got, want)
			}
		}
	}
}

// TestWriterHeads: the writer's cache of line heads never gives a line
// another entity's head: names of the same bytes at other addresses, a
// name that is a prefix of another in the same memory, the same pair
// under another nature, and more pairs than the cache has entries.
func TestWriterHeads(t *testing.T) {
	names := "CPU10CPU1Worker StateWorker"
	cpu10, cpu1, cpu := names[0:5], names[5:9], names[0:3]
	state, worker := names[9:21], names[9:15]
	var es []tracecast.Entity
	add := func(n tracecast.Nature, c, ty string) {
		es = append(es, tracecast.Entity{Nature: n, Container: c, Type: ty, Start: 1, End: 2, Value: "v"})
	}
	for i := range 3 {
		add(tracecast.NatureState, cpu10, state)
		add(tracecast.NatureState, cpu, state) // cpu10's address
		add(tracecast.NatureState, cpu1, state)
		add(tracecast.NatureState, cpu10, worker) // state's address
		add(tracecast.NatureVariable, cpu10, state)
		add(tracecast.NatureEvent, cpu10, state)
		add(tracecast.NatureState, strings.Clone(cpu10), strings.Clone(state))
		for j := range 200 { // every entry of the cache taken, several times
			add(tracecast.Nature(j%5), "c"+strconv.Itoa(j+i), "t"+strconv.Itoa(j%7))
		}
	}
	var want []byte
	for i := range es {
		want = append(AppendLine(want, &es[i], false), '\n')
	}
	var got bytes.Buffer
	w := NewWriter(&got, false)
	if err := w.Write(es); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		gl, wl := strings.Split(got.String(), "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("line %d: %q, want %q", i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("%d lines, want %d", len(gl), len(wl))
	}
}
