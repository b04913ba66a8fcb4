package paje

import (
	"bytes"
	"compress/gzip"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/internal/gziptest"
	"github.com/tracecast/tracecast/internal/pajetest"
	"github.com/tracecast/tracecast/sinks/pjdump"
)

var update = flag.Bool("update", false, "rewrite the golden pj_dump files from pj_dump itself")

// dump reads a trace and returns its pj_dump lines, sorted (the order of a
// streaming reader is completion order, pj_dump's is container order).
func dump(t testing.TB, r io.Reader, opts Options) ([]string, Stats, error) {
	t.Helper()
	var lines []string
	var b []byte
	st, err := Read(r, opts, func(es []tracecast.Entity) error {
		for i := range es {
			b = pjdump.AppendLine(b[:0], &es[i], opts.UserDefined)
			lines = append(lines, string(b))
		}
		return nil
	})
	sort.Strings(lines)
	return lines, st, err
}

func pjOpts(name string) Options {
	o := DefaultOptions()
	o.Name = name
	o.PjdumpQuirks = true
	o.ReorderHorizon = 0
	return o
}

func readGolden(t *testing.T, path string) []string {
	t.Helper()
	data := gziptest.ReadFile(t, path)
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	sort.Strings(lines)
	return lines
}

func diffLines(t *testing.T, name string, got, want []string) {
	t.Helper()
	if len(got) == len(want) {
		same := true
		for i := range got {
			if got[i] != want[i] {
				same = false
				break
			}
		}
		if same {
			return
		}
	}
	w := map[string]int{}
	for _, l := range want {
		w[l]++
	}
	var extra []string
	for _, l := range got {
		if w[l] > 0 {
			w[l]--
		} else {
			extra = append(extra, l)
		}
	}
	var missing []string
	for l, n := range w {
		for ; n > 0; n-- {
			missing = append(missing, l)
		}
	}
	sort.Strings(missing)
	t.Errorf("%s: %d lines, want %d; %d extra, %d missing\nfirst extra: %q\nfirst missing: %q",
		name, len(got), len(want), len(extra), len(missing), extra[:min(5, len(extra))], missing[:min(5, len(missing))])
}

// TestGoldenPjdump checks the project's own traces against pj_dump's output
// stored next to them (testdata/*/*.pjdump[.gz]).
func TestGoldenPjdump(t *testing.T) {
	traces, _ := filepath.Glob("../../testdata/*/*.trace*")
	traces = append(traces, starpuTrace)
	if len(traces) == 0 {
		t.Fatal("no traces in testdata")
	}
	for _, tr := range traces {
		golden := strings.TrimSuffix(strings.TrimSuffix(tr, ".gz"), ".trace") + ".pjdump"
		if strings.HasSuffix(tr, ".gz") {
			golden += ".gz"
		}
		if _, err := os.Stat(golden); err != nil {
			continue
		}
		t.Run(filepath.Base(tr), func(t *testing.T) {
			checkGolden(t, tr, golden, pjOpts(tr))
		})
		// X.u.pjdump, when there is one, is pj_dump -u's output.
		uGolden := strings.Replace(golden, ".pjdump", ".u.pjdump", 1)
		if _, err := os.Stat(uGolden); err != nil {
			continue
		}
		t.Run(filepath.Base(tr)+"/-u", func(t *testing.T) {
			opts := pjOpts(tr)
			opts.UserDefined = true
			checkGolden(t, tr, uGolden, opts, "-u")
		})
	}
}

func checkGolden(t *testing.T, tr, golden string, opts Options, pjArgs ...string) {
	if *update {
		writeGolden(t, tr, golden, pjArgs...)
	}
	f, err := os.Open(tr)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, _, err := dump(t, f, opts)
	if err != nil {
		t.Fatal(err)
	}
	diffLines(t, tr, got, readGolden(t, golden))
}

// writeGolden regenerates a golden file from pj_dump itself (go test
// -update): the goldens are the peer tool's output, never tracecast's.
func writeGolden(t *testing.T, trace, golden string, pjArgs ...string) {
	pj := needPjdump(t)
	plain := trace
	if strings.HasSuffix(trace, ".gz") {
		plain = filepath.Join(t.TempDir(), "plain.trace")
		if err := os.WriteFile(plain, gziptest.ReadFile(t, trace), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := exec.Command(pj, append(pjArgs, plain)...).Output()
	if err != nil {
		t.Fatalf("pj_dump %s: %v", trace, err)
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	sort.Strings(lines)
	data := []byte(strings.Join(lines, "\n") + "\n")
	if strings.HasSuffix(golden, ".gz") {
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		w.Write(data)
		w.Close()
		data = b.Bytes()
	}
	if err := os.WriteFile(golden, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// hdr defines a program P of workers W, their states S and the links L
// between them, and creates the program and two workers.
var hdr = pajetest.Header(
	pajetest.ContainerType(0), pajetest.StateType(1), pajetest.CreateContainer(2), pajetest.DestroyContainer(3),
	pajetest.SetState(4).ContainerFirst(), pajetest.PushState(5).ContainerFirst().With("Tag string"), pajetest.PopState(6).ContainerFirst(),
	pajetest.LinkType(7), pajetest.StartLink(8), pajetest.EndLink(9),
) + `0 P 0 Program
0 W P Worker
1 S W "Worker State"
7 L P W W Transfer
2 0 p P 0 prog
2 0 w1 W p "worker 1"
2 0 w2 W p "worker 2"
`

// hdrLines is the number of lines in hdr.
var hdrLines = strings.Count(hdr, "\n")

func TestSemantics(t *testing.T) {
	body := `4 1 w1 S Idle
5 2 w1 S Fetch t1 # a comment after the event
5 2.5 w1 S "Deep state" t2
6 3 w1 S
6 3.5 w1 S
4 4 w1 S Idle
8 1 L p w1 v k1
9 2 L p w2 v k1
9 3 L p w1 v k2
8 2.5 L p w2 v k2
4 5 w2 S Run
3 6 W w2
`
	got, _, err := dump(t, strings.NewReader(hdr+body), pjOpts("sem"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"Container, 0, 0, 0, 6, 6, 0",
		"Container, 0, Program, 0, 6, 6, prog",
		"Container, prog, Worker, 0, 6, 6, worker 1",
		"Container, prog, Worker, 0, 6, 6, worker 2",
		"Link, prog, Transfer, 1.000000, 2.000000, 1.000000, v, worker 1, worker 2, k1",
		"Link, prog, Transfer, 2.500000, 3.000000, 0.500000, v, worker 2, worker 1, k2",
		"State, worker 1, Worker State, 1.000000, 4.000000, 3.000000, 0.000000, Idle",
		"State, worker 1, Worker State, 2.000000, 3.500000, 1.500000, 1.000000, Fetch",
		"State, worker 1, Worker State, 2.500000, 3.000000, 0.500000, 2.000000, Deep state",
		"State, worker 1, Worker State, 4.000000, 6.000000, 2.000000, 0.000000, Idle",
		"State, worker 2, Worker State, 5.000000, 6.000000, 1.000000, 0.000000, Run",
	}
	sort.Strings(want)
	diffLines(t, "semantics", got, want)
}

func TestErrors(t *testing.T) {
	n := func(k int) string { return "x:" + itoa(hdrLines+k) + ": " }
	cases := []struct {
		name, body, want string
	}{
		{"unknown event id", "42 1 w1 S Idle\n", n(1) + "unknown event id '42'"},
		{"field count", "4 1 w1 S\n", n(1) + "event 4 (PajeSetState) has 3 fields, its definition at line 23 has 4"},
		{"bad number", "4 1.2.3x w1 S Idle\n", n(1) + "bad time '1.2.3x'"},
		{"type before definition", "4 1 w1 Z Idle\n", n(1) + "unknown type 'Z'"},
		{"unknown container", "4 1 w9 S Idle\n", n(1) + "unknown container 'w9'"},
		{"pop on empty stack", "6 1 w1 S\n", n(1) + "illegal pop of state type 'Worker State' on container 'worker 1': no state is open"},
		{"unmatched link", "8 1 L p w1 v k1\n", "x: link 'k1' of type 'Transfer' in container 'prog' (line " + itoa(hdrLines+1) + ") has no end (--ignore-incomplete-links drops it)"},
		{"binary garbage", "4 1 w1 S Id\x00le\n", n(1) + "binary data (byte 0x0 at column 12)"},
		{"invalid utf8", "4 1 w1 S \xff\xfe\n", n(1) + "binary data (invalid UTF-8)"},
		{"truncated last line", "4 1 w1 S Idle\n4 2 w1", n(2) + "truncated last line (no newline at end of input): event 4 (PajeSetState) has 2 fields, its definition at line 23 has 4"},
		{"unterminated string", "4 1 w1 S \"Idle\n", n(1) + "unterminated quoted string"},
		{"time order", "4 2 w1 S Idle\n4 1 w1 S Run\n", n(2) + "not time-ordered: time 1 is before 2 on container 'worker 1', type 'Worker State'" + stateOrderHint},
		{"variable time order", varDefs + "11 2 V w1 1\n11 1 V w1 2\n", n(14) + "not time-ordered: time 1 is before 2 on container 'worker 1', type 'Load' (the reorder buffer is off: give a reorder horizon, e.g. --reorder-horizon 3s, to put late variable samples back in order)"},
		// pj_dump's strtod would read 1_0 as 1 and stop; Go's ParseFloat
		// as 10. Neither is a number of the format.
		{"wrong container type", "4 1 p S Idle\n", n(1) + "type 'Worker State' is a child of container type 'Worker', not of 'Program' (container 'prog')"},
		{"same-named container types", "0 W2 P Worker\n2 0 w3 W2 p w3\n8 1 L p w3 v k1\n", n(3) + "container 'w3' is of type 'Worker' (alias 'W2'), link type 'Transfer' wants 'Worker' (alias 'W')"},
		{"underscore in a number", "4 1_0 w1 S Idle\n", n(1) + "bad time '1_0'"},
		{"hexadecimal float", "4 0x1p4 w1 S Idle\n", n(1) + "bad time '0x1p4'"},
		{"unknown event name", "%EventDef PajeFoo 99\n", n(1) + "unknown event name 'PajeFoo'"},
		{"missing obligatory field", "%EventDef PajeNewEvent 99\n% Time date\n%EndEventDef\n", n(3) + "invalid definition of PajeNewEvent 99: obligatory fields missing: Type, Container, Value"},
		{"redefinition", "%EventDef PajeNewEvent 4\n", n(1) + "redefinition of event with id '4'"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := dump(t, strings.NewReader(hdr+c.body), pjOpts("x"))
			if err == nil || err.Error() != c.want {
				t.Fatalf("got error %v\nwant       %s", err, c.want)
			}
			// Lenient mode skips the line and counts it.
			o := pjOpts("x")
			o.Lenient = true
			_, st, err := dump(t, strings.NewReader(hdr+c.body), o)
			if err != nil {
				t.Fatalf("lenient: %v", err)
			}
			if st.Skipped.Total() == 0 {
				t.Fatalf("lenient: nothing counted as skipped")
			}
		})
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// stateOrderHint ends the error of a state, event or link out of order: the
// reorder horizon cannot help those, whatever it is.
const stateOrderHint = " (states, events, links and container ends must be in time order on each container and type, as pj_dump requires: sort the trace by time first, e.g. with StarPU's starpu_paje_sort)"

// varDefs defines a variable type Load on workers and SetVariable (11):
// 13 lines.
var varDefs = pajetest.Header(pajetest.VariableType(10), pajetest.SetVariable(11)) + `10 V W Load
`

// TestOrderHints: the advice given with a time-order error fits what is out
// of order. The reorder horizon holds variable samples only: a state out of
// order is not told to raise it, and a variable sample later than it is
// told the horizon in the trace's unit, not -1.
func TestOrderHints(t *testing.T) {
	o := pjOpts("x")
	o.ReorderHorizon = -1 // the default: 3 s
	_, _, err := dump(t, strings.NewReader(hdr+"4 5 w1 S Idle\n4 4 w1 S Run\n"), o)
	if want := "x:" + itoa(hdrLines+2) + ": not time-ordered: time 4 is before 5 on container 'worker 1', type 'Worker State'" + stateOrderHint; err == nil || err.Error() != want {
		t.Errorf("state: got %v\nwant     %s", err, want)
	}
	_, _, err = dump(t, strings.NewReader(hdr+varDefs+"11 10 V w1 1\n11 20 V w1 2\n11 5 V w1 3\n"), o)
	if want := "x:" + itoa(hdrLines+15) + ": not time-ordered: variable 'Load' of container 'worker 1' set at 5, after a change at 10 was applied (more than the reorder horizon, 3 s, late: raise --reorder-horizon)"; err == nil || err.Error() != want {
		t.Errorf("variable: got %v\nwant        %s", err, want)
	}
}

func TestLineTooLong(t *testing.T) {
	o := pjOpts("x")
	o.MaxLineBytes = 64
	body := "4 1 w1 S " + strings.Repeat("A", 100) + "\n4 2 w1 S Idle\n"
	_, _, err := dump(t, strings.NewReader(hdr+body), o)
	want := "x:" + itoa(hdrLines+1) + ": line longer than 64 bytes (raise --max-line-bytes)"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %s", err, want)
	}
	o.Lenient = true
	got, st, err := dump(t, strings.NewReader(hdr+body), o)
	if err != nil || st.Skipped["line too long"] != 1 {
		t.Fatalf("lenient: %v %v", err, st.Skipped)
	}
	if !strings.Contains(strings.Join(got, "\n"), "2.000000, 2.000000, 0.000000, 0.000000, Idle") {
		t.Fatalf("the line after the long one was lost:\n%s", strings.Join(got, "\n"))
	}
}

// TestReorder reads a StarPU trace with its events shuffled within a bounded
// window and checks the result equals the sorted reading.
func TestReorder(t *testing.T) {
	data := gziptest.ReadFile(t, starpuTrace)
	o := DefaultOptions()
	o.Name = "raw"
	want, _, err := dump(t, bytes.NewReader(data), o)
	if err != nil {
		t.Fatal(err)
	}
	// Swap neighbouring timed lines far down the trace: still within the
	// horizon, so the output must not change.
	lines := strings.Split(string(data), "\n")
	for i := len(lines) / 2; i+1 < len(lines); i += 97 {
		if strings.HasPrefix(lines[i], "10\t") && strings.HasPrefix(lines[i+1], "13\t") {
			lines[i], lines[i+1] = lines[i+1], lines[i]
		}
	}
	got, st, err := dump(t, strings.NewReader(strings.Join(lines, "\n")), o)
	if err != nil {
		t.Fatal(err)
	}
	diffLines(t, "shuffled", got, want)
	if st.MaxBuffered == 0 {
		t.Fatal("the reorder buffer was not used")
	}
	// With no horizon, the raw StarPU trace (3092 inversions across types,
	// none within one) must still be accepted, as pj_dump accepts it.
	o.ReorderHorizon = 0
	if _, _, err := dump(t, bytes.NewReader(data), o); err != nil {
		t.Fatal(err)
	}
}

// TestReadBoundaries checks the output does not depend on how the input is
// cut into reads.
func TestReadBoundaries(t *testing.T) {
	data, err := os.ReadFile("../../testdata/smpi/farm-8.trace")
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := dump(t, bytes.NewReader(data), pjOpts("a"))
	if err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]io.Reader{
		"one byte": iotest.OneByteReader(bytes.NewReader(data)),
		"half":     iotest.HalfReader(bytes.NewReader(data)),
		"gzip":     gzipped(data),
	} {
		got, _, err := dump(t, r, pjOpts("a"))
		if err != nil {
			t.Fatal(name, err)
		}
		diffLines(t, name, got, want)
	}
}

func gzipped(data []byte) io.Reader {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write(data)
	w.Close()
	return &b
}

// starpuTrace is a raw StarPU 1.4.9 trace (2 CPU workers, Cholesky), the one
// the demo embeds; its pj_dump output sits next to it.
const starpuTrace = "../../pipelines/testdata/starpu-cholesky-2cpu.trace.gz"

// TestValueAliases: state values resolve to their aliases' names, also
// when an alias is defined after the value was used bare (and cached so),
// and when it is redefined. (TestNameKeyCollisions has aliases that share
// a slot of the value cache.)
func TestValueAliases(t *testing.T) {
	body := `%EventDef PajeDefineEntityValue 10
% Alias string
% Type string
% Name string
%EndEventDef
10 ab S Alpha
10 cb S Charlie
10 gX S Golf
4 1 w1 S ab
4 2 w1 S cb
4 3 w1 S ab
4 3.5 w1 S gX
4 3.6 w1 S ab
4 4 w1 S X
4 4.5 w1 S X
10 X S Ex
4 5 w1 S X
10 ab S Again
4 6 w1 S ab
4 7 w1 S cb
`
	got, _, err := dump(t, strings.NewReader(hdr+body), pjOpts("alias"))
	if err != nil {
		t.Fatal(err)
	}
	var states []string
	for _, l := range got {
		if strings.HasPrefix(l, "State") {
			states = append(states, l[strings.LastIndex(l, ", ")+2:])
		}
	}
	want := []string{"Alpha", "Alpha", "Alpha", "Again", "Charlie", "Charlie", "Ex", "Golf", "X", "X"} // sorted lines: by start time
	sort.Strings(states)
	sort.Strings(want)
	if strings.Join(states, ",") != strings.Join(want, ",") {
		t.Errorf("state values %q, want %q (lines %q)", states, want, got)
	}
}
