package paje

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/internal/gziptest"
)

// FuzzParse feeds arbitrary bytes to the reader (its one-goroutine form,
// see readSerial). Properties: no panic or hang; states, variables and
// containers never end before they start; no number is infinite or NaN;
// and the result does not depend on how the input is cut into reads.
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob("../../testdata/smpi/*-4.trace")
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(hdr + "4 1 w1 S Idle\n5 2 w1 S Fetch t\n6 3 w1 S\n8 1 L p w1 v k1\n9 2 L p w2 v k1\n3 4 W w1\n"))
	f.Add(gziptest.ReadFile(f, starpuTrace)[:4000])
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<16 {
			return // large inputs only slow the search down
		}
		o := smallLimits()
		var whole []tracecast.Entity
		_, err := readSerial(bytes.NewReader(data), o, func(es []tracecast.Entity) error {
			for _, e := range es {
				if e.Nature != tracecast.NatureLink && e.End < e.Start {
					t.Fatalf("%v ends before it starts: %+v", e.Nature, e)
				}
				if math.IsInf(e.Start, 0) || math.IsInf(e.End, 0) || math.IsInf(e.Duration(), 0) || math.IsInf(e.Number, 0) || math.IsNaN(e.Number) {
					t.Fatalf("a number out of range: %+v", e)
				}
			}
			whole = append(whole, es...)
			return nil
		})
		// Lenient mode skips bad lines; only unreadable input (a corrupt
		// gzip stream) may still stop it.
		var perr *Error
		if err != nil && (!errors.As(err, &perr) || perr.Kind != "input") {
			t.Fatalf("lenient mode returned %v", err)
		}
		var pieces []tracecast.Entity
		_, err = readSerial(iotest.OneByteReader(bytes.NewReader(data)), o, func(es []tracecast.Entity) error {
			pieces = append(pieces, es...)
			return nil
		})
		if (err == nil) != (perr == nil) {
			t.Fatalf("one-byte reads: %v", err)
		}
		if !slices.EqualFunc(whole, pieces, func(a, b tracecast.Entity) bool {
			return a.Nature == b.Nature && a.Container == b.Container && a.Type == b.Type &&
				(a.Start == b.Start || a.Start != a.Start) && (a.End == b.End || a.End != a.End) && a.Value == b.Value
		}) {
			t.Fatalf("one-byte reads gave %d entities, whole reads %d", len(pieces), len(whole))
		}
		// Strict mode must not panic either.
		o.Lenient = false
		readSerial(bytes.NewReader(data), o, func([]tracecast.Entity) error { return nil })
	})
}

// smallLimits are lenient options with small bounds, so that random input
// reaches the limits quickly.
func smallLimits() Options {
	o := DefaultOptions()
	o.MaxLineBytes = 4096
	o.MaxContainers = 1000
	o.MaxOpenStates = 10000
	o.MaxBuffered = 1000
	o.Lenient = true
	return o
}

// FuzzParallel reads arbitrary bytes sequentially (readSerial, line by
// line) and with Read cut into chunks of a fuzzed size on one and on several
// threads: the entities, statistics and errors must be the same, the
// batches too between the two Reads. Goroutines make coverage
// nondeterministic: run it with a short -fuzzminimizetime (make fuzz does).
func FuzzParallel(f *testing.F) {
	seeds, _ := filepath.Glob("../../testdata/smpi/*-4.trace")
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint16(100), uint8(2), false)
	}
	f.Add([]byte(hdr+"4 1 w1 S Idle\r\n\n5 2 w1 S Fetch t\n6 3 w1 S\n8 1 L p w1 v k1\n9 2 L p w2 v k1\n3 4 W w1"), uint16(7), uint8(3), true)
	f.Add([]byte("\ufeff"+hdr+"4 1 w1 S "+strings.Repeat("A", 300)+"\n4 2 w1 S Idle\n"), uint16(16), uint8(4), false)
	f.Add(gziptest.ReadFile(f, starpuTrace)[:4000], uint16(1000), uint8(2), true)
	f.Fuzz(func(t *testing.T, data []byte, chunkBytes uint16, threads uint8, strict bool) {
		if len(data) > 1<<16 {
			return
		}
		o := smallLimits()
		o.MaxLineBytes = 256
		o.Lenient = !strict
		want := collect(readSerial, data, o)
		size := 1 + int(chunkBytes)%2048
		one := collect(Read, data, withThreads(o, 1, size))
		sameRead(t, "threads 1, chunks of "+itoa(size), one, want, false)
		n := 2 + int(threads)%4
		got := collect(Read, data, withThreads(o, n, size))
		sameRead(t, "threads "+itoa(n)+", chunks of "+itoa(size), got, one, true)
		got = processChunks(t, data, withThreads(o, n, 0), size)
		sameRead(t, "processor on chunks, threads "+itoa(n)+", chunks of "+itoa(size), got, nonEmpty(one), true)
	})
}

// FuzzProcessor feeds arbitrary bytes to the pipeline processor (what a
// Kafka or file source drives) in batches of a fuzzed number of lines, on
// one thread (Parser.Line) and on several (a batch of 256 lines or more is
// tokenized in parallel, then resolved in order): the same entities,
// statistics and error. Run it with a short -fuzzminimizetime (goroutines
// make coverage nondeterministic).
func FuzzProcessor(f *testing.F) {
	seeds, _ := filepath.Glob("../../testdata/smpi/*-4.trace")
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint16(300), uint8(1), false)
	}
	f.Add([]byte("\ufeff"+hdr+"4 1 w1 S Idle\r\n\n5 2 w1 S Fetch t\n6 3 w1 S\n8 1 L p w1 v k1\n9 2 L p w2 v k1\n3 4 W w1"), uint16(256), uint8(2), true)
	f.Add(gziptest.ReadFile(f, starpuTrace)[:20000], uint16(400), uint8(0), true)
	f.Fuzz(func(t *testing.T, data []byte, batch uint16, threads uint8, strict bool) {
		if len(data) > 1<<16 {
			return
		}
		o := smallLimits()
		o.MaxLineBytes = 256
		o.Lenient = !strict
		batches := lineBatches(data, 1+int(batch)%600)
		run := func(threads int) (readResult, Stats) {
			o := o
			o.Threads = threads
			pr := NewProcessor(o).(*processor)
			var r readResult
			emit := func(_ context.Context, b tracecast.Batch) error {
				r.es = append(r.es, b.Items.([]tracecast.Entity)...)
				return nil
			}
			for _, lb := range batches {
				if r.err = pr.Process(context.Background(), tracecast.Batch{Stream: "s", Items: lb}, emit); r.err != nil {
					return r, pr.Stats()
				}
			}
			r.err = pr.Flush(context.Background(), emit)
			return r, pr.Stats()
		}
		one, st1 := run(1)
		n := 2 + int(threads)%3
		many, stn := run(n)
		what := "threads " + itoa(n) + ", batches of " + itoa(len(batches[0]))
		if (one.err == nil) != (many.err == nil) || one.err != nil && one.err.Error() != many.err.Error() {
			t.Fatalf("%s: error %v, one thread %v", what, many.err, one.err)
		}
		if !reflect.DeepEqual(st1, stn) {
			t.Fatalf("%s: stats %+v, one thread %+v", what, stn, st1)
		}
		if len(one.es) != len(many.es) {
			t.Fatalf("%s: %d entities, one thread %d", what, len(many.es), len(one.es))
		}
		for i := range one.es {
			if !sameEntity(&one.es[i], &many.es[i]) {
				t.Fatalf("%s: entity %d is %+v, one thread %+v", what, i, many.es[i], one.es[i])
			}
		}
	})
}
