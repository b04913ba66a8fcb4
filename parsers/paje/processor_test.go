package paje

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/internal/input"
	"github.com/tracecast/tracecast/sinks/pjdump"
)

// lineBatches cuts data into batches of n lines (all of them when n <= 0),
// as a file source hands them over; a last line without a newline is
// Partial.
func lineBatches(data []byte, n int) [][]tracecast.Line {
	var batches [][]tracecast.Line
	var cur []tracecast.Line
	num := int64(0)
	for len(data) > 0 {
		line, rest, nl := bytes.Cut(data, []byte("\n"))
		num++
		cur = append(cur, tracecast.Line{Data: line, Num: num, Partial: !nl})
		data = rest
		if n > 0 && len(cur) == n {
			batches, cur = append(batches, cur), nil
		}
	}
	return append(batches, cur)
}

// process runs the pipeline processor on batches and returns its output as
// pj_dump lines in emission order, the batches' time-unit metadata and the
// statistics it reported.
func process(t *testing.T, batches [][]tracecast.Line, opts Options) ([]string, []string, *Stats, error) {
	t.Helper()
	var lines, units []string
	var reported *Stats
	pr := &processor{p: NewParser(opts), report: func(st Stats) { reported = &st }}
	var b []byte
	emit := func(_ context.Context, out tracecast.Batch) error {
		for i, e := range out.Items.([]tracecast.Entity) {
			b = pjdump.AppendLine(b[:0], &e, true)
			lines = append(lines, string(b))
			if i == 0 {
				units = append(units, out.Meta["time_unit"])
			}
		}
		return nil
	}
	ctx := context.Background()
	for _, lb := range batches {
		if err := pr.Process(ctx, tracecast.Batch{Stream: "s", Items: lb}, emit); err != nil {
			return lines, units, reported, err
		}
	}
	err := pr.Flush(ctx, emit)
	return lines, units, reported, err
}

// readLines is Read's output as pj_dump lines, in order.
func readLines(t *testing.T, data []byte, opts Options) ([]string, Stats) {
	t.Helper()
	var lines []string
	var b []byte
	st, err := Read(bytes.NewReader(data), opts, func(es []tracecast.Entity) error {
		for i := range es {
			b = pjdump.AppendLine(b[:0], &es[i], true)
			lines = append(lines, string(b))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return lines, st
}

// TestProcessorMatchesRead: the pipeline processor emits exactly what Read
// hands out, in the same order, however its input is cut into batches —
// also with pj_dump's window when it is inexact (a StarPU trace read as
// seconds), where the output depends on where entities are taken.
func TestProcessorMatchesRead(t *testing.T) {
	starpu, err := os.Open(starpuTrace)
	if err != nil {
		t.Fatal(err)
	}
	defer starpu.Close()
	zr, err := input.Decompress(starpu)
	if err != nil {
		t.Fatal(err)
	}
	starpuData, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	smpiData, err := os.ReadFile("../../testdata/smpi/stencil-16.trace")
	if err != nil {
		t.Fatal(err)
	}
	// Where the take points change the inexact window's output (the
	// pipeline once emitted more entities than Read here); a real
	// trace, used when it is beside the repository.
	var luData []byte
	if f, err := os.Open(sharedTraces + "/starpu-1.4.9-generated/lu_lws_12cpu_2numa/paje.trace.gz"); err == nil {
		zr, err := input.Decompress(f)
		if err == nil {
			luData, err = io.ReadAll(zr)
		}
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name    string
		data    []byte
		quirks  bool
		unit    string
		inexact bool
	}{
		// An input without a single event: nothing was let go early (a
		// flood of newlines warned that pj_dump would drop entities).
		{"blank lines", []byte("\n\n\r\n"), true, "", false}, // no event: no unit
		{"smpi", smpiData, false, "s", false},
		{"smpi pj_dump window", smpiData, true, "s", false},
		{"starpu", starpuData, false, "ms", false},
		{"starpu pj_dump window", starpuData, true, "ms", false},
		{"starpu read as seconds, inexact window", starpuData, true, "s", true},
		{"shared lu_lws read as seconds, inexact window", luData, true, "s", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.data == nil {
				needShared(t)
			}
			opts := DefaultOptions()
			opts.Name = "s"
			opts.PjdumpQuirks = tc.quirks
			if tc.inexact {
				opts.TimeUnit = tc.unit
			}
			want, wantStats := readLines(t, tc.data, opts)
			if wantStats.QuirksInexact != tc.inexact {
				t.Fatalf("Read: QuirksInexact = %v, want %v", wantStats.QuirksInexact, tc.inexact)
			}
			for _, n := range []int{1, 7, 1024, 0} {
				got, units, st, err := process(t, lineBatches(tc.data, n), opts)
				if err != nil {
					t.Fatalf("batches of %d lines: %v", n, err)
				}
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Fatalf("batches of %d lines: %d entities differ from Read's %d", n, len(got), len(want))
				}
				for _, u := range units {
					if u != tc.unit {
						t.Fatalf("batches of %d lines: time_unit metadata %q, want %q", n, u, tc.unit)
					}
				}
				if st == nil || st.Entities != wantStats.Entities || st.Lines != wantStats.Lines || st.QuirksInexact != tc.inexact {
					t.Fatalf("batches of %d lines: reported %+v, want %+v", n, st, wantStats)
				}
			}
		})
	}
}

// TestProcessorStreamEdges: a stream without lines is an empty trace (its
// root container, as Read gives), and a last line without a newline that
// cannot be read is reported as truncated, strict or lenient.
func TestProcessorStreamEdges(t *testing.T) {
	opts := DefaultOptions()
	opts.Name = "s"
	opts.PjdumpQuirks = true
	want, _ := readLines(t, nil, opts)
	got, _, _, err := process(t, [][]tracecast.Line{{}}, opts)
	if err != nil || strings.Join(got, "\n") != strings.Join(want, "\n") || len(got) != 1 {
		t.Fatalf("empty stream: %q, %v; Read gives %q", got, err, want)
	}

	data, err := os.ReadFile("../../testdata/smpi/ring-4.trace")
	if err != nil {
		t.Fatal(err)
	}
	cut := append(bytes.Clone(data), "12 0.5 2"...) // a PushState missing a field, no newline
	_, _, _, err = process(t, lineBatches(cut, 100), opts)
	var le *Error
	if !errors.As(err, &le) || le.Kind != "truncated last line" || !strings.Contains(le.Error(), "truncated last line (no newline at end of input)") {
		t.Fatalf("strict: %v", err)
	}
	opts.Lenient = true
	_, _, st, err := process(t, lineBatches(cut, 100), opts)
	if err != nil || st == nil || st.Skipped["truncated last line"] != 1 {
		t.Fatalf("lenient: %v, %+v", err, st)
	}
}

// TestWatermarkCostIsLinear: the watermarks cost O(live containers) each;
// computed for each batch while 100 000 containers are live, they took
// visiting 100 of them per entity (quadratic: 1000 with a million); now at
// most 2·watermarkEvery, on both inputs: lines, and chunks (the file
// source's), whose path computed them for every batch again, so that
// `states --format csv` took 1.5 and 5.9 s with 80 000 and 160 000 open
// containers.
func TestWatermarkCostIsLinear(t *testing.T) {
	const n = 100_000
	var b strings.Builder
	b.WriteString(hdr)
	for i := range n {
		fmt.Fprintf(&b, "2 0 c%d W p c%d\n", i, i)
	}
	// Then a state each, which the next one closes: entities out while
	// all the containers are live.
	for k := range 3 {
		for i := range n {
			fmt.Fprintf(&b, "4 %d c%d S Idle\n", k+1, i)
		}
	}
	data := []byte(b.String())
	for _, chunks := range []bool{false, true} {
		t.Run(map[bool]string{false: "lines", true: "chunks"}[chunks], func(t *testing.T) {
			o := DefaultOptions()
			o.Threads = 1
			pr := NewProcessor(o).(*processor)
			entities := 0
			emit := func(_ context.Context, b tracecast.Batch) error {
				entities += len(b.Items.([]tracecast.Entity))
				if math.IsNaN(b.Watermark) {
					t.Fatal("no watermark")
				}
				return nil
			}
			var batches []tracecast.Batch
			if chunks {
				for c := range bytes.Lines(data) { // one line a chunk: the most batches
					batches = append(batches, tracecast.Batch{Stream: "s", Items: []tracecast.Chunk{{Data: c, Lines: 1, First: len(batches) == 0}}})
				}
			} else {
				for _, lb := range lineBatches(data, 1024) {
					batches = append(batches, tracecast.Batch{Stream: "s", Items: lb})
				}
			}
			for _, b := range batches {
				if err := pr.Process(context.Background(), b, emit); err != nil {
					t.Fatal(err)
				}
			}
			if err := pr.Flush(context.Background(), emit); err != nil {
				t.Fatal(err)
			}
			if entities < n {
				t.Fatalf("%d entities", entities)
			}
			if per := float64(pr.p.wmVisits) / float64(entities); per > 2*watermarkEvery {
				t.Errorf("%d containers visited for the watermarks of %d entities: %.0f per entity", pr.p.wmVisits, entities, per)
			}
		})
	}
}
