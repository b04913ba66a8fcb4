package paje

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/internal/pajetest"
)

// allocated returns the bytes fn allocates (on the heap, over the whole
// run, not its peak).
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestBlankLinesCostNothing: blank (and blank-looking) lines are not kept
// anywhere. Before, the splitting goroutine kept a record per line in a
// chunk sent only when 256 KiB of line data had accumulated, which blank
// lines never make: 3 MB of newlines grew the process to 496 MB.
func TestBlankLinesCostNothing(t *testing.T) {
	const n = 4 << 20 // lines
	cases := []struct {
		name string
		line string
	}{
		{"newlines", "\n"},
		{"crlf", "\r\n"},
		{"spaces", "  \n"},
		{"tabs", "\t\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data := []byte(hdr + strings.Repeat(c.line, n) + "4 1 w1 S Idle\n")
			var st Stats
			var err error
			got := allocated(func() {
				_, st, err = dump(t, bytes.NewReader(data), pjOpts("blank"))
			})
			if err != nil {
				t.Fatal(err)
			}
			if want := int64(hdrLines + n + 1); st.Lines != want {
				t.Errorf("%d lines counted, want %d", st.Lines, want)
			}
			// The reader's own buffers (4 chunks of 256 KiB, the line
			// buffer) are a few MiB; a record per line would be 64 bytes
			// × 4 Mi = 256 MiB.
			if got > 16<<20 {
				t.Errorf("%d MiB allocated for %d blank lines", got>>20, n)
			}
		})
	}
	t.Run("gzip", func(t *testing.T) {
		data := gzipped([]byte(hdr + strings.Repeat("\n", n)))
		var err error
		got := allocated(func() { _, _, err = dump(t, data, pjOpts("blank")) })
		if err != nil {
			t.Fatal(err)
		}
		if got > 16<<20 {
			t.Errorf("%d MiB allocated for a gzip of %d newlines", got>>20, n)
		}
	})
}

// TestBlankLinesKeepNumbers: skipping blank lines does not change the line
// numbers of the errors after them, in Read and in readSerial.
func TestBlankLinesKeepNumbers(t *testing.T) {
	body := "\n\n  \n\r\n4 1 w9 S Idle\n"
	want := "x:" + itoa(hdrLines+5) + ": unknown container 'w9'"
	for name, read := range map[string]func(io.Reader, Options) error{
		"Read": func(r io.Reader, o Options) error {
			_, _, err := dump(t, r, o)
			return err
		},
		"readSerial": func(r io.Reader, o Options) error {
			_, err := readSerial(r, o, func([]tracecast.Entity) error { return nil })
			return err
		},
	} {
		if err := read(strings.NewReader(hdr+body), pjOpts("x")); err == nil || err.Error() != want {
			t.Errorf("%s: got %v, want %s", name, err, want)
		}
	}
}

// varHdr is hdr with a variable type V on workers, set (10) and added to
// (11).
var varHdr = strings.Replace(hdr, "0 P 0 Program\n", pajetest.Header(
	pajetest.VariableType(12), pajetest.SetVariable(10).ContainerFirst(), pajetest.AddVariable(11).ContainerFirst(),
)+`0 P 0 Program
`, 1) + "12 V W Flops\n"

// TestOverflow: a number that does not fit is an error naming its line (a
// counted skip in lenient mode), never an infinity in the output (a
// variable of 1e39, read as a C float like pj_dump does, was +Inf: null in
// JSON).
func TestOverflow(t *testing.T) {
	n := strings.Count(varHdr, "\n")
	at := func(k int) string { return "x:" + itoa(n+k) + ": " }
	long := strings.Repeat("9", 500)
	cases := []struct{ name, body, want string }{
		{"float variable", "10 1 w1 V 1e39\n", at(1) + "variable value '1e39' out of range (pj_dump reads values as C floats, at most 3.4e38 in magnitude)"},
		{"negative", "10 1 w1 V -4e38\n", at(1) + "variable value '-4e38' out of range"},
		{"double", "10 1 w1 V 1e309\n", at(1) + "bad variable value '1e309'"},
		{"time", "4 1e301 w1 S Idle\n", at(1) + "time '1e301' out of range (at most 1e300 in magnitude)"},
		{"time double", "4 1e400 w1 S Idle\n", at(1) + "bad time '1e400'"},
		{"long number", "10 1 w1 V " + long + "\n", at(1) + "bad variable value '" + strings.Repeat("9", 100) + "…'"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := dump(t, strings.NewReader(varHdr+c.body), pjOpts("x"))
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Fatalf("got %v\nwant %s", err, c.want)
			}
			o := pjOpts("x")
			o.Lenient = true
			got, st, err := dump(t, strings.NewReader(varHdr+c.body), o)
			if err != nil || st.Skipped["bad number"] != 1 {
				t.Fatalf("lenient: %v %v", err, st.Skipped)
			}
			for _, l := range got {
				if strings.Contains(l, "Inf") || strings.Contains(l, "NaN") {
					t.Errorf("lenient output: %s", l)
				}
			}
		})
	}
	// In range: a float's largest value, and sums beyond it (pajeng
	// computes in double).
	got, _, err := dump(t, strings.NewReader(varHdr+"10 1 w1 V 3.4e38\n11 2 w1 V 3.4e38\n"), pjOpts("x"))
	if err != nil || !strings.Contains(strings.Join(got, "\n"), ", 679999990") {
		t.Errorf("%v\n%s", err, strings.Join(got, "\n"))
	}
}

// TestQuotesAreShort: a message quotes at most 100 bytes of a token.
func TestQuotesAreShort(t *testing.T) {
	long := strings.Repeat("é", 5000)
	for _, body := range []string{
		"4 1 " + long + " S Idle\n",
		long + " 1 w1 S Idle\n",
		"4 1 w1 " + long + " Idle\n",
		"%EventDef PajeFoo" + long + " 99\n",
		"4 " + long + " w1 S Idle\n",
	} {
		_, _, err := dump(t, strings.NewReader(hdr+body), pjOpts("x"))
		if err == nil || len(err.Error()) > 250 {
			t.Errorf("%d bytes: %.300v", len(err.Error()), err)
		}
	}
}

// TestBOM: a UTF-8 byte order mark at the start of a trace is skipped by
// every way in (before: "unknown event id" at line 1).
func TestBOM(t *testing.T) {
	data, err := os.ReadFile("../../testdata/smpi/ring-8.trace")
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := dump(t, bytes.NewReader(data), pjOpts("a"))
	if err != nil {
		t.Fatal(err)
	}
	bom := append([]byte("\ufeff"), data...)
	got, _, err := dump(t, bytes.NewReader(bom), pjOpts("a"))
	if err != nil {
		t.Fatal(err)
	}
	diffLines(t, "Read", got, want)
	if _, err := readSerial(bytes.NewReader(bom), pjOpts("a"), func([]tracecast.Entity) error { return nil }); err != nil {
		t.Errorf("readSerial: %v", err)
	}
	p := NewParser(pjOpts("a"))
	for i, l := range bytes.Split(bytes.TrimSuffix(bom, []byte("\n")), []byte("\n")) {
		if err := p.Line(l, int64(i+1)); err != nil {
			t.Fatalf("Line: %v", err)
		}
	}
	var lt LineTimer
	if _, ok := lt.Time([]byte("\ufeff%EventDef PajeSetState 4")); ok || len(lt.hdr.defs) != 0 || lt.hdr.cur == nil {
		t.Errorf("LineTimer did not read the header line")
	}
	// Elsewhere than at the start, it is data: an unknown event id.
	if _, _, err := dump(t, strings.NewReader(hdr+"\ufeff4 1 w1 S Idle\n"), pjOpts("x")); err == nil {
		t.Error("a BOM inside the trace was accepted")
	}
}

// TestDeepNesting: containers nested a hundred thousand deep (each its own
// type) are read and ended children first, without a stack as deep as the
// tree: the recursion overflowed the goroutine's stack, a fatal error,
// once the limits allowed a deep enough tree. pj_dump crashes there.
func TestDeepNesting(t *testing.T) {
	const n = 100_000
	var b strings.Builder
	b.WriteString(hdr)
	b.WriteString("0 T0 0 T0\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "0 T%d T%d T%d\n", i, i-1, i)
	}
	b.WriteString("2 0 c0 T0 0 c0\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "2 %d c%d T%d c%d c%d\n", i, i, i, i-1, i)
	}
	defer debug.SetMaxStack(debug.SetMaxStack(1 << 20)) // 1 MiB: far less than n frames
	o := DefaultOptions()
	o.MaxTypes = 2 * n // a type per level
	var got []tracecast.Entity
	if _, err := Read(strings.NewReader(b.String()), o, func(es []tracecast.Entity) error {
		got = append(got, es...)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var tree []string // hdr defines a few containers of its own
	for _, e := range got {
		if strings.HasPrefix(e.Type, "T") {
			tree = append(tree, e.Value)
		}
	}
	if len(tree) != n {
		t.Fatalf("%d containers of the tree, want %d", len(tree), n)
	}
	// Children first: the deepest container ends first, c0 last.
	if tree[0] != "c99999" || tree[n-1] != "c0" {
		t.Fatalf("order: %s first, %s last", tree[0], tree[n-1])
	}
}
