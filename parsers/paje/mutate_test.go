package paje

import (
	"bytes"
	"math/rand/v2"
	"os"
	"testing"
	"testing/iotest"
	"time"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/internal/gziptest"
)

// TestMutationsTerminate feeds a few thousand random mutations of real
// traces to the reader (a deterministic complement to FuzzParse that runs in
// every `go test`): each must finish promptly, in every mode.
func TestMutationsTerminate(t *testing.T) {
	seed, _ := os.ReadFile("../../testdata/smpi/ring-4.trace")
	seed2 := gziptest.ReadFile(t, starpuTrace)[:20000]
	r := rand.New(rand.NewPCG(1, 2))
	n := 2000
	if testing.Short() {
		n = 300 // make test-long runs all of them
	}
	for i := 0; i < n; i++ {
		base := seed
		if i%2 == 1 {
			base = seed2
		}
		d := append([]byte(nil), base...)
		for k := 0; k < 1+r.IntN(8); k++ {
			switch r.IntN(4) {
			case 0:
				d[r.IntN(len(d))] = byte(r.IntN(256))
			case 1:
				p := r.IntN(len(d))
				d = append(d[:p], d[min(len(d), p+r.IntN(50)):]...)
			case 2:
				p := r.IntN(len(d))
				q := r.IntN(len(d))
				d = append(d[:p], append(append([]byte(nil), d[q:min(len(d), q+r.IntN(200))]...), d[p:]...)...)
			case 3:
				d = d[:r.IntN(len(d))+1]
			}
		}
		done := make(chan struct{})
		go func() {
			o := smallLimits()
			defer close(done)
			var a, b []tracecast.Entity
			sa, ea := Read(iotest.OneByteReader(bytes.NewReader(d)), o, func(es []tracecast.Entity) error { a = append(a, es...); return nil })
			sb, eb := readSerial(bytes.NewReader(d), o, func(es []tracecast.Entity) error { b = append(b, es...); return nil })
			if (ea == nil) != (eb == nil) || len(a) != len(b) || sa.Lines != sb.Lines || sa.Skipped.Total() != sb.Skipped.Total() {
				t.Errorf("iteration %d: Read and readSerial differ: %v/%v, %d/%d entities, %d/%d lines, %v/%v skipped",
					i, ea, eb, len(a), len(b), sa.Lines, sb.Lines, sa.Skipped, sb.Skipped)
				os.WriteFile("/tmp/differ.trace", d, 0o644)
			}
			o.Lenient = false
			_, ea = Read(bytes.NewReader(d), o, func([]tracecast.Entity) error { return nil })
			_, eb = readSerial(bytes.NewReader(d), o, func([]tracecast.Entity) error { return nil })
			if (ea == nil) != (eb == nil) || ea != nil && ea.Error() != eb.Error() {
				t.Errorf("iteration %d: strict errors differ: %v / %v", i, ea, eb)
			}
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			os.WriteFile("/tmp/hang.trace", d, 0o644)
			t.Fatalf("iteration %d hangs; input in /tmp/hang.trace", i)
		}
	}
}
