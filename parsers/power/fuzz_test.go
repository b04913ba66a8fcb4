package power

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"reflect"
	"testing"
	"testing/iotest"

	"github.com/tracecast/tracecast"
)

func FuzzRead(f *testing.F) {
	for _, s := range []string{
		"time,node,watts\n0,a,1\n1,a,2\n",
		"0,100\n1,x\n",
		"{\"time\":1,\"node\":\"a\",\"watts\":3}\n",
		"[{\"timestamp\":\"2025-07-21T16:15:31+02:00\",\"device_id\":\"t\",\"metric_id\":\"m\",\"value\":1}]",
		"time,node,energy_uj,max_energy_range_uj\n0,p,5,10\n1,p,2,10\n2,p,1,\n",
	} {
		f.Add([]byte(s), false, uint8(0))
	}
	formats := []Format{Auto, CSV, JSONL, RAPL, Kwollect}
	f.Fuzz(func(t *testing.T, in []byte, lenient bool, fm uint8) {
		opts := Options{Lenient: lenient, Format: formats[int(fm)%len(formats)], Node: "n"}
		var n int64
		st, err := Read(bytes.NewReader(in), opts, func(b []tracecast.PowerSample) error {
			for _, s := range b {
				if math.IsNaN(s.T) || math.IsNaN(s.Watts) || math.IsInf(s.Watts, 0) {
					t.Fatalf("bad sample %+v", s)
				}
			}
			n += int64(len(b))
			return nil
		})
		if err == nil && n != st.Samples {
			t.Fatalf("delivered %d, counted %d", n, st.Samples)
		}
	})
}

// FuzzFastJSON checks the hand-written JSON fast path against encoding/json:
// whenever the fast path accepts a line, the slow path must give the same
// sample (or the same filtering).
func FuzzFastJSON(f *testing.F) {
	for _, s := range []string{
		`{"time":1,"node":"a","watts":2}`,
		`{"timestamp":"2025-07-21T16:15:31+02:00","device_id":"t","metric_id":"m","value":1.5,"labels":{"x":"y"}}`,
		`{"time":1,"timestamp":2,"node":"","device_id":"d","watts":3,"value":4}`,
		`{"time":1e3,"watts":0.5,"metric_id":""}`,
		`{"time":"1","watts":2}`,
		`{"time":"1970-01-01T00:00:01Z","time":3,"watts":2,"watts":4}`,
	} {
		f.Add([]byte(s), "m")
	}
	f.Fuzz(func(t *testing.T, line []byte, metric string) {
		if bytes.IndexByte(line, '\n') >= 0 {
			return
		}
		var fast, slow []tracecast.PowerSample
		rf := &reader{opts: Options{Node: "def", Metric: metric}, nodes: map[string]string{}, stats: Stats{Skipped: map[string]int64{}},
			fn: func(s []tracecast.PowerSample) error { fast = append(fast, s...); return nil }}
		err, ok := rf.fastRecord(line, 1)
		if !ok {
			return
		}
		if err == nil {
			err = rf.flush()
		}
		rs := &reader{opts: Options{Node: "def", Metric: metric}, nodes: map[string]string{}, stats: Stats{Skipped: map[string]int64{}},
			fn: func(s []tracecast.PowerSample) error { slow = append(slow, s...); return nil }}
		var rec jsonRecord
		if jerr := json.Unmarshal(line, &rec); jerr != nil {
			t.Fatalf("fast path accepted invalid JSON %q: %v", line, jerr)
		}
		serr := rs.record(&rec, 1)
		if serr == nil {
			serr = rs.flush()
		}
		if (err == nil) != (serr == nil) || !reflect.DeepEqual(fast, slow) || rf.stats.Filtered != rs.stats.Filtered {
			t.Fatalf("%q: fast %v %v, slow %v %v", line, fast, err, slow, serr)
		}
	})
}

// FuzzDocument feeds arbitrary Kwollect documents to the streaming reader:
// read whole, one byte at a time, and line by line by the pipeline
// processor, it gives the same samples and the same error; a document it
// accepts in strict mode is valid JSON; no input panics.
func FuzzDocument(f *testing.F) {
	for _, s := range []string{
		"[]",
		"[\n{\"timestamp\":1,\"device_id\":\"a\",\"metric_id\":\"m\",\"value\":2},\n{\"timestamp\":\"2025-07-21T16:15:31+02:00\",\"value\":3,\"labels\":{\"x\":[1,\"]\"]}}\n]\n",
		"[{\"timestamp\":1,\"value\":2} {\"timestamp\":2,\"value\":2}]",
		"[{\"time\":\"1\",\"watts\":2},{\"time\":1,\"time\":2,\"watts\":\"3\"}]",
		"[1, \"a\\\"]\", null, [], {}]",
		"\ufeff[{\"timestamp\":1,\"value\":2}]",
	} {
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, in []byte, lenient bool) {
		in = bytes.ReplaceAll(in, []byte{'\r'}, nil) // a file source strips them
		if len(in) == 0 || in[0] != '[' {
			in = append([]byte{'['}, in...)
		}
		opts := Options{Name: "f", Format: Kwollect, Lenient: lenient, MaxLineBytes: 256, Metric: "m"}
		read := func(r io.Reader) ([]tracecast.PowerSample, error) {
			var out []tracecast.PowerSample
			_, err := Read(r, opts, func(b []tracecast.PowerSample) error {
				out = append(out, b...)
				return nil
			})
			return out, err
		}
		whole, err := read(bytes.NewReader(in))
		bytewise, err2 := read(iotest.OneByteReader(bytes.NewReader(in)))
		lines, err3 := processLines(t, string(in), opts, 3)
		errs := func(e error) string {
			if e == nil {
				return ""
			}
			return e.Error()
		}
		if errs(err) != errs(err2) || errs(err) != errs(err3) {
			t.Fatalf("errors differ: whole %v, one byte %v, lines %v", err, err2, err3)
		}
		if err == nil && (!reflect.DeepEqual(whole, bytewise) || !reflect.DeepEqual(whole, lines)) {
			t.Fatalf("samples differ: whole %v, one byte %v, lines %v", whole, bytewise, lines)
		}
		if err == nil && !lenient && !json.Valid(in) {
			t.Fatalf("invalid JSON accepted: %q", in)
		}
		if err != nil && len(err.Error()) > 400 {
			t.Fatalf("error of %d bytes", len(err.Error()))
		}
	})
}
