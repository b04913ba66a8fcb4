package power

import (
	"bytes"
	"compress/gzip"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/tracecast/tracecast"
)

func readAll(t *testing.T, in string, opts Options) ([]tracecast.PowerSample, Stats, error) {
	t.Helper()
	var out []tracecast.PowerSample
	st, err := Read(strings.NewReader(in), opts, func(b []tracecast.PowerSample) error {
		out = append(out, b...)
		return nil
	})
	return out, st, err
}

func TestFormats(t *testing.T) {
	tests := []struct {
		name string
		in   string
		opts Options
		want []tracecast.PowerSample
	}{
		{"csv header", "time,node,watts\n0,n1,100\n0.5,n2,90.5\n1,n1,110\n", Options{},
			[]tracecast.PowerSample{{T: 0, Node: "n1", Watts: 100, Mean: false, Since: 0}, {T: 0.5, Node: "n2", Watts: 90.5, Mean: false, Since: 0}, {T: 1, Node: "n1", Watts: 110, Mean: false, Since: 0}}},
		{"csv header reordered", "# meter\nwatts,time,host\n100,0,a\n101,0.02,a\n", Options{},
			[]tracecast.PowerSample{{T: 0, Node: "a", Watts: 100, Mean: false, Since: 0}, {T: 0.02, Node: "a", Watts: 101, Mean: false, Since: 0}}},
		{"csv no header", "0,n1,100\r\n1,n1,120\r\n", Options{},
			[]tracecast.PowerSample{{T: 0, Node: "n1", Watts: 100, Mean: false, Since: 0}, {T: 1, Node: "n1", Watts: 120, Mean: false, Since: 0}}},
		{"csv two columns", "0,100\n1,120", Options{Node: "solo"},
			[]tracecast.PowerSample{{T: 0, Node: "solo", Watts: 100, Mean: false, Since: 0}, {T: 1, Node: "solo", Watts: 120, Mean: false, Since: 0}}},
		{"csv rfc3339", "time,node,watts\n1970-01-01T00:00:10Z,n,5\n1970-01-01T00:00:10.5+00:00,n,6\n", Options{},
			[]tracecast.PowerSample{{T: 10, Node: "n", Watts: 5, Mean: false, Since: 0}, {T: 10.5, Node: "n", Watts: 6, Mean: false, Since: 0}}},
		{"jsonl", `{"time":1,"node":"a","watts":50}` + "\n" + `{"time":"1970-01-01T00:00:02Z","node":"a","watts":60}` + "\n", Options{},
			[]tracecast.PowerSample{{T: 1, Node: "a", Watts: 50, Mean: false, Since: 0}, {T: 2, Node: "a", Watts: 60, Mean: false, Since: 0}}},
		{"kwollect array", `[{"timestamp":"2025-07-21T16:15:31+02:00","device_id":"taurus-7","metric_id":"wattmetre_power_watt","value":131.7,"labels":{"_device_orig":"wattmetre1-port6"}},
 {"timestamp":1753107332.5,"device_id":"taurus-7","metric_id":"wattmetre_power_watt","value":130},
 {"timestamp":1753107332.5,"device_id":"taurus-7","metric_id":"bmc_node_power_watt","value":140}]`,
			Options{Format: Kwollect, Metric: "wattmetre_power_watt"},
			[]tracecast.PowerSample{{T: 1753107331, Node: "taurus-7", Watts: 131.7, Mean: false, Since: 0}, {T: 1753107332.5, Node: "taurus-7", Watts: 130, Mean: false, Since: 0}}},
		{"kwollect array auto", "\n [{\"timestamp\":5,\"device_id\":\"x\",\"metric_id\":\"m\",\"value\":1}]", Options{},
			[]tracecast.PowerSample{{T: 5, Node: "x", Watts: 1, Mean: false, Since: 0}}},
		{"kwollect lines auto", `{"timestamp":5,"device_id":"x","metric_id":"m","value":1}` + "\n", Options{},
			[]tracecast.PowerSample{{T: 5, Node: "x", Watts: 1, Mean: false, Since: 0}}},
		// 1 J over 1 s = 1 W; then a wrap at 10 J: 9.5 → 0.5 is 1 J over 0.5 s.
		{"rapl wrap", "time,node,energy_uj,max_energy_range_uj\n0,p0,8500000,10000000\n1,p0,9500000,10000000\n1.5,p0,500000,10000000\n", Options{},
			[]tracecast.PowerSample{{T: 1, Node: "p0", Watts: 1, Mean: true, Since: 0}, {T: 1.5, Node: "p0", Watts: 2, Mean: true, Since: 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, st, err := readAll(t, tt.in, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %v\nwant %v", got, tt.want)
			}
			if st.Samples != int64(len(tt.want)) {
				t.Errorf("Samples = %d", st.Samples)
			}
		})
	}
}

func TestRAPLWrapAndUnknownRange(t *testing.T) {
	in := "time,node,energy_uj,max_energy_range_uj\n" +
		"0,pkg,100,\n" +
		"1,pkg,2000100,\n" + // 2 W
		"2,pkg,50,\n" + // wrapped, range unknown: skipped and counted
		"3,pkg,3000050,\n" + // 3 W from the skipped reading on
		"4,pkg,1000000,4000000\n" // wrap with known range: (4e6−3000050+1e6) µJ
	got, st, err := readAll(t, in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []tracecast.PowerSample{{T: 1, Node: "pkg", Watts: 2, Mean: true, Since: 0}, {T: 3, Node: "pkg", Watts: 3, Mean: true, Since: 2}, {T: 4, Node: "pkg", Watts: (4e6 - 3000050 + 1e6) * 1e-6, Mean: true, Since: 3}}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if math.Abs(got[i].Watts-want[i].Watts) > 1e-9 || got[i].T != want[i].T || got[i].Since != want[i].Since {
			t.Errorf("sample %d = %v, want %v", i, got[i], want[i])
		}
	}
	if st.Skipped["rapl-range-unknown"] != 1 || st.Wraps != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestBadLines(t *testing.T) {
	tests := []struct {
		name, in string
		opts     Options
		err      string
		skipped  map[string]int64
		samples  int64
	}{
		{"bad value", "time,node,watts\n0,a,1\n1,a,x\n2,a,3\n", Options{Name: "p.csv"}, "p.csv:3: bad value \"x\"", map[string]int64{"value": 1}, 2},
		{"bad time", "0,a,1\nnoon,a,2\n", Options{Name: "p.csv"}, "p.csv:2: bad time \"noon\"", map[string]int64{"time": 1}, 1},
		{"negative", "0,a,-1\n", Options{Name: "p"}, "p:1: negative power \"-1\"", map[string]int64{"value": 1}, 0},
		{"short row", "time,node,watts\n0,a\n", Options{Name: "p"}, "p:2: 2 fields, expected at least 3", map[string]int64{"fields": 1}, 0},
		{"bad json", "{\"time\":1,\"watts\":2}\n{\"time\":\n", Options{Name: "j"}, "j:2: bad JSON", map[string]int64{"json": 1}, 1},
		{"json no value", "{\"time\":1}\n", Options{Name: "j"}, "j:1: no watts or value", map[string]int64{"value": 1}, 0},
		{"rapl backwards", "time,node,energy_uj\n1,p,1\n1,p,2\n", Options{Name: "r"}, "r:3: counter reading at 1 not after", map[string]int64{"time": 1}, 0},
		// A reading above its own range is no counter value: taken, it
		// made a spurious wrap (+25 J here) or, wrapping below it, a
		// negative power.
		{"rapl above its range", "time,node,energy_uj,max_energy_range_uj\n0,p,1000,10000\n1,p,25000,10000\n2,p,2000,10000\n", Options{Name: "r"},
			"r:3: energy_uj 25000 above max_energy_range_uj 10000", map[string]int64{"value": 1}, 1},
		{"rapl wrap below zero", "time,node,energy_uj,max_energy_range_uj\n0,p,50000,\n1,p,2000,10000\n", Options{Name: "r"},
			"r:3: counter fell from 50000 to 2000, but its range 10000 is below 50000", map[string]int64{"value": 1}, 0},
		{"kwollect bad record", "[\n{\"timestamp\":1,\"value\":2},\n{\"timestamp\":\"x\",\"value\":3}\n]", Options{Name: "k", Format: Kwollect}, "k:3: bad time", map[string]int64{"time": 1}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := readAll(t, tt.in, tt.opts)
			if err == nil || !strings.HasPrefix(err.Error(), tt.err) {
				t.Errorf("strict: err %v, want prefix %q", err, tt.err)
			}
			tt.opts.Lenient = true
			_, st, err := readAll(t, tt.in, tt.opts)
			if err != nil {
				t.Fatalf("lenient: %v", err)
			}
			if !reflect.DeepEqual(map[string]int64(st.Skipped), tt.skipped) || st.Samples != tt.samples {
				t.Errorf("lenient: skipped %v samples %d, want %v %d", st.Skipped, st.Samples, tt.skipped, tt.samples)
			}
		})
	}
	if _, _, err := readAll(t, "[{\"timestamp\":1,", Options{Format: Kwollect, Lenient: true}); err == nil {
		t.Error("broken Kwollect array accepted")
	}
}

func TestGzipAndBatches(t *testing.T) {
	var raw bytes.Buffer
	raw.WriteString("time,node,watts\n")
	for i := range 10000 {
		raw.WriteString("0.")
		raw.WriteString(strings.Repeat("0", 1))
		raw.WriteString("1,n,")
		raw.WriteString(string(rune('1' + i%9)))
		raw.WriteString("\n")
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(raw.Bytes())
	zw.Close()
	var n, batches int
	st, err := Read(&gz, Options{}, func(b []tracecast.PowerSample) error {
		n += len(b)
		batches++
		if len(b) > BatchSize {
			t.Errorf("batch of %d", len(b))
		}
		return nil
	})
	if err != nil || n != 10000 || st.Samples != 10000 || batches != 3 {
		t.Errorf("n %d batches %d err %v", n, batches, err)
	}
}

func TestParseFormat(t *testing.T) {
	for _, s := range []string{"auto", "CSV", "jsonl", "rapl", "kwollect", ""} {
		if _, err := ParseFormat(s); err != nil {
			t.Errorf("%q: %v", s, err)
		}
	}
	if _, err := ParseFormat("xml"); err == nil {
		t.Error("xml accepted")
	}
}
