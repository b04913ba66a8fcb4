package power

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/tracecast/tracecast"
)

// kwollectDoc writes a Kwollect answer of n records, one a line as
// Kwollect (PostgREST) writes them, without holding it: a reader that
// generates it as it is read.
type kwollectDoc struct {
	n, k   int
	metric string
	buf    bytes.Buffer
	peak   uint64 // largest heap seen while reading, sampled
}

func (d *kwollectDoc) Read(p []byte) (int, error) {
	for d.buf.Len() < len(p) && d.k <= d.n {
		switch {
		case d.k == 0:
			d.buf.WriteString("[\n")
		case d.k == d.n:
			d.buf.WriteString("\n]\n")
		default:
			if d.k > 1 {
				d.buf.WriteString(",\n")
			}
			fmt.Fprintf(&d.buf, `{"timestamp":"2025-07-21T16:15:%02d.%06dZ","device_id":"node0","metric_id":%q,"value":%.2f,"labels":{"_device_orig":"wattmetre1-port6"}}`,
				d.k/1000000, d.k%1000000, d.metric, 90+float64(d.k%50))
		}
		d.k++
		if d.k%20000 == 0 {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			d.peak = max(d.peak, ms.HeapAlloc)
		}
	}
	if d.buf.Len() == 0 {
		return 0, io.EOF
	}
	return d.buf.Read(p)
}

// TestDocumentStreams: a Kwollect document is read in the memory of one
// record. Before, it was read whole (io.ReadAll, then a copy per record):
// a 3 GB document took 11 GB.
func TestDocumentStreams(t *testing.T) {
	const n = 500_000 // records: about 75 MB
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	doc := &kwollectDoc{n: n, metric: "other"}
	st, err := Read(doc, Options{Name: "kw", Format: Kwollect, Metric: "wattmetre_power_watt"}, func([]tracecast.PowerSample) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if st.Filtered != n-1 || st.Samples != 0 {
		t.Fatalf("stats %+v", st)
	}
	if grown := int64(doc.peak) - int64(base); grown > 24<<20 {
		t.Errorf("the heap grew by %d MiB while reading a %d-record document", grown>>20, n)
	}
}

// TestDocumentLinesAndChunks: the same document read whole by Read, one byte
// at a time, and line by line by the pipeline processor gives the same
// samples.
func TestDocumentLinesAndChunks(t *testing.T) {
	doc := "\ufeff[\n" + // a BOM is skipped
		`{"timestamp":"2025-07-21T16:15:31+02:00","device_id":"taurus-7","metric_id":"wattmetre_power_watt","value":131.7,"labels":{"a":"]}"}},` + "\n" +
		` {"timestamp":1753107332.5,"device_id":"taurus-7","metric_id":"wattmetre_power_watt","value":130},` +
		`{"timestamp":1753107333,` + "\n" + `"device_id":"taurus-\u0037","value":1e2, "labels":[[{}],"\"]"]}` + "\n]\n"
	want := []tracecast.PowerSample{{T: 1753107331, Node: "taurus-7", Watts: 131.7}, {T: 1753107332.5, Node: "taurus-7", Watts: 130}, {T: 1753107333, Node: "taurus-7", Watts: 100}}
	for name, r := range map[string]io.Reader{
		"whole":    strings.NewReader(doc),
		"one byte": iotest.OneByteReader(strings.NewReader(doc)),
	} {
		got, st, err := readFrom(t, r, Options{Format: Auto})
		if err != nil {
			t.Fatal(name, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %v\nwant %v", name, got, want)
		}
		if st.Lines != 5 {
			t.Errorf("%s: %d lines", name, st.Lines)
		}
	}
	got, err := processLines(t, doc, Options{Format: Kwollect}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("processor: got %v\nwant %v", got, want)
	}
}

// processLines runs the pipeline processor on in, per batches of n lines.
func processLines(t testing.TB, in string, opts Options, n int) ([]tracecast.PowerSample, error) {
	t.Helper()
	p, err := NewProcessor(opts)
	if err != nil {
		t.Fatal(err)
	}
	var out []tracecast.PowerSample
	emit := func(_ context.Context, b tracecast.Batch) error {
		out = append(out, b.Items.([]tracecast.PowerSample)...)
		return nil
	}
	var lines []tracecast.Line
	for i, l := range strings.Split(strings.TrimSuffix(in, "\n"), "\n") {
		lines = append(lines, tracecast.Line{Num: int64(i + 1), Data: []byte(l)})
	}
	ctx := context.Background()
	for len(lines) > 0 {
		k := min(n, len(lines))
		if err := p.Process(ctx, tracecast.Batch{Stream: opts.Name, Items: lines[:k]}, emit); err != nil {
			return out, err
		}
		lines = lines[k:]
	}
	return out, p.Flush(ctx, emit)
}

func TestDocumentErrors(t *testing.T) {
	long := `{"timestamp":1,"value":1,"labels":"` + strings.Repeat("x", 200) + `"}`
	tests := []struct {
		name, in string
		err      string // strict mode
		skipped  map[string]int64
		samples  int64
		fatal    bool // also an error in lenient mode
	}{
		{"bad record", "[\n{\"timestamp\":1,\"value\":2},\n{\"timestamp\":\"x\",\"value\":3}\n]", `k:3: bad time "\"x\""`, map[string]int64{"time": 1}, 1, false},
		{"not an object", "[\n{\"timestamp\":1,\"value\":2},\n 42,\n \"s\"\n]", `k:3: an array element is not an object: "42"`, map[string]int64{"json": 2}, 1, false},
		{"bad json in element", "[{\"timestamp\":1,\"value\":2},\n{\"timestamp\":1 \"value\":3}]", "k:2: bad JSON: invalid character", map[string]int64{"json": 1}, 1, false},
		{"record too long", "[" + long + ",\n{\"timestamp\":1,\"value\":2}]", "k:1: record longer than 100 bytes (raise max_line_bytes)", map[string]int64{"record too long": 1}, 1, false},
		{"quoted number time", "[{\"timestamp\":\"1753107332.5\",\"value\":2}]", `k:1: bad time "\"1753107332.5\""`, map[string]int64{"time": 1}, 0, false},
		{"missing comma", "[\n{\"timestamp\":1,\"value\":2}\n{\"timestamp\":2,\"value\":2}]", "k:3: broken JSON array: expected ',' or ']' after an element, found \"{\"", nil, 0, true},
		{"trailing comma", "[{\"timestamp\":1,\"value\":2},]", "k:1: broken JSON array: expected an element, found \"]\"", nil, 0, true},
		{"mismatched", "[{\"timestamp\":1,\"value\":[2}]", "k:1: broken JSON array: mismatched \"}\"", nil, 0, true},
		{"truncated", "[{\"timestamp\":1,\"value\":2},\n{\"timestamp\":1,", "k:2: broken JSON array: the input ends before the closing ']' (a truncated download?)", nil, 0, true},
		{"after the end", "[{\"timestamp\":1,\"value\":2}]\n[]", "k:2: broken JSON array: data after the closing ']'", nil, 0, true},
		{"deep", "[" + strings.Repeat("[", 10001), "k:1: broken JSON array: nested deeper than 10000", nil, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := Options{Name: "k", Format: Kwollect, MaxLineBytes: 100}
			if strings.HasPrefix(tt.name, "deep") {
				opts.MaxLineBytes = 1 << 20
			}
			for _, mode := range []string{"Read", "processor"} {
				var err error
				var st Stats
				read := func(o Options) {
					if mode == "Read" {
						_, st, err = readFrom(t, strings.NewReader(tt.in), o)
						return
					}
					var got []tracecast.PowerSample
					got, err = processLines(t, tt.in, o, 1)
					st.Samples = int64(len(got))
				}
				read(opts)
				if err == nil || !strings.HasPrefix(err.Error(), tt.err) {
					t.Errorf("%s: strict: err %v, want prefix %q", mode, err, tt.err)
				}
				if len(err.Error()) > 300 {
					t.Errorf("%s: error of %d bytes", mode, len(err.Error()))
				}
				opts.Lenient = true
				read(opts)
				opts.Lenient = false
				if tt.fatal {
					if err == nil {
						t.Errorf("%s: lenient: a broken array was accepted", mode)
					}
					continue
				}
				if err != nil {
					t.Fatalf("%s: lenient: %v", mode, err)
				}
				if st.Samples != tt.samples || mode == "Read" && !reflect.DeepEqual(map[string]int64(st.Skipped), tt.skipped) {
					t.Errorf("%s: lenient: skipped %v samples %d, want %v %d", mode, st.Skipped, st.Samples, tt.skipped, tt.samples)
				}
			}
		})
	}
}

// TestJSONKeys: a record decodes as encoding/json decodes it, on the fast
// path and on encoding/json's (forced by an escaped key the fast path does
// not read): a key given twice takes its last value, keys match whatever
// their case, the time is a number or an RFC 3339 string, never a quoted
// number.
func TestJSONKeys(t *testing.T) {
	tests := []struct {
		name, rec string
		want      []tracecast.PowerSample
		err       string
	}{
		{"duplicate value", `"time":1,"value":2,"value":3`, []tracecast.PowerSample{{T: 1, Node: "n", Watts: 3}}, ""},
		{"duplicate time", `"time":1,"time":"1970-01-01T00:00:05Z","value":2`, []tracecast.PowerSample{{T: 5, Node: "n", Watts: 2}}, ""},
		{"duplicate node", `"time":1,"node":"a","node":"b","value":2`, []tracecast.PowerSample{{T: 1, Node: "b", Watts: 2}}, ""},
		{"time over timestamp", `"timestamp":9,"time":1,"value":2`, []tracecast.PowerSample{{T: 1, Node: "n", Watts: 2}}, ""},
		{"watts over value", `"time":1,"value":2,"watts":4`, []tracecast.PowerSample{{T: 1, Node: "n", Watts: 4}}, ""},
		{"case", `"TIME":1,"Value":2`, []tracecast.PowerSample{{T: 1, Node: "n", Watts: 2}}, ""},
		{"quoted rfc3339", `"time":"1970-01-01T00:00:01.5Z","value":2`, []tracecast.PowerSample{{T: 1.5, Node: "n", Watts: 2}}, ""},
		{"quoted number time", `"time":"1.5","value":2`, nil, `j:1: bad time "\"1.5\""`},
		{"quoted value", `"time":1,"value":"2"`, nil, "j:1: bad JSON: json: cannot unmarshal string"},
		{"duplicate bad then good", `"time":"x","time":1,"value":2`, []tracecast.PowerSample{{T: 1, Node: "n", Watts: 2}}, ""},
	}
	for _, tt := range tests {
		for _, slow := range []bool{false, true} {
			rec := "{" + tt.rec + "}"
			if slow {
				rec = `{"\u0078":0,` + tt.rec + "}"
			}
			got, _, err := readFrom(t, strings.NewReader(rec+"\n"), Options{Name: "j", Format: JSONL, Node: "n"})
			if tt.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.err) {
					t.Errorf("%s (slow %v): err %v, want %q", tt.name, slow, err, tt.err)
				}
				continue
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("%s (slow %v): got %v %v, want %v", tt.name, slow, got, err, tt.want)
			}
		}
	}
}

func readFrom(t testing.TB, r io.Reader, opts Options) ([]tracecast.PowerSample, Stats, error) {
	t.Helper()
	var out []tracecast.PowerSample
	st, err := Read(r, opts, func(b []tracecast.PowerSample) error {
		out = append(out, b...)
		return nil
	})
	return out, st, err
}

// TestOverflow: numbers beyond 1e300 in magnitude, and RAPL readings that
// make such a power, are bad lines (never an infinity downstream); a
// message quotes at most ~100 bytes of the token.
func TestOverflow(t *testing.T) {
	long := strings.Repeat("9", 5000)
	tests := []struct {
		name, in string
		opts     Options
		err      string
	}{
		{"csv value", "0,a,1e301\n", Options{}, `p:1: bad value "1e301"`},
		{"csv time", "0,a,1\n1e301,a,1\n", Options{}, `p:2: bad time "1e301"`},
		{"csv long", "0,a," + long + "\n", Options{}, `p:1: bad value "` + strings.Repeat("9", 100) + `…"`},
		{"json value", `{"time":1,"watts":1e301}` + "\n", Options{}, "p:1: bad power 1e+301"},
		{"json huge", `{"time":1,"watts":1` + strings.Repeat("0", 5000) + `}` + "\n", Options{}, "p:1: bad JSON: json: cannot unmarshal number 1000"},
		{"kwollect value", `[{"timestamp":1,"value":1e301}]`, Options{}, "p:1: bad power 1e+301"},
		{"rapl", "time,node,energy_uj,max_energy_range_uj\n0,p,0,\n1e-300,p,1e300,\n", Options{}, "p:3: power out of range"},
	}
	for _, tt := range tests {
		tt.opts.Name = "p"
		_, _, err := readFrom(t, strings.NewReader(tt.in), tt.opts)
		if err == nil || !strings.HasPrefix(err.Error(), tt.err) || len(err.Error()) > 300 {
			t.Errorf("%s: %.300v, want %s", tt.name, err, tt.err)
		}
		tt.opts.Lenient = true
		if _, st, err := readFrom(t, strings.NewReader(tt.in), tt.opts); err != nil || st.Skipped.Total() != 1 || st.Samples > 1 {
			t.Errorf("%s lenient: %v %+v", tt.name, err, st)
		}
	}
}

// TestBOM: a UTF-8 byte order mark at the start is skipped, whatever the
// format, by Read and by the pipeline processor.
func TestBOM(t *testing.T) {
	for _, in := range []string{"\ufefftime,node,watts\n0,a,1\n", "\ufeff{\"time\":0,\"node\":\"a\",\"watts\":1}\n", "\ufeff[{\"time\":0,\"node\":\"a\",\"watts\":1}]\n"} {
		want := []tracecast.PowerSample{{T: 0, Node: "a", Watts: 1}}
		got, _, err := readFrom(t, strings.NewReader(in), Options{})
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("Read %.20q: %v %v", in, got, err)
		}
		got, err = processLines(t, in, Options{}, 1)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("processor %.20q: %v %v", in, got, err)
		}
	}
}
