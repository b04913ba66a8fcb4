package tracecast

import (
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func TestTraceTimeUnits(t *testing.T) {
	// Decimal lengths in other units convert exactly (one rounding).
	for _, tc := range []struct {
		in, unit string
		want     float64
	}{{"100us", "s", 0.0001}, {"1ms", "s", 0.001}, {"2000us", "ms", 2}, {"3s", "ms", 3000}, {"0.1ms", "us", 100}, {"7ns", "s", 7e-9}} {
		if d, _ := ParseTraceTime(tc.in); d.In(tc.unit) != tc.want {
			t.Errorf("%s in %s: %v, want %v", tc.in, tc.unit, d.In(tc.unit), tc.want)
		}
	}
	for _, tc := range []struct {
		in   string
		want float64 // seconds
		err  bool
	}{
		{in: "100ms", want: 0.1},
		{in: " 2s ", want: 2},
		{in: "500us", want: 500e-6},
		{in: "500µs", want: 500e-6},
		{in: "1.5e-3s", want: 1.5e-3},
		{in: "-5s", want: -5},
		{in: "1m30s", want: 90},
		{in: "2h", want: 7200},
		{in: "10ns", want: 1e-8},
		{in: "x", err: true},
		{in: "1x", err: true},
		{in: "", err: true},
		{in: "inf", err: true},
		{in: "NaN", err: true},
	} {
		d, err := ParseTraceTime(tc.in)
		got, ok := d.Seconds()
		if (err != nil) != tc.err || (!tc.err && (!ok || !close(got, tc.want))) {
			t.Errorf("%q: %v %v %v, want %v", tc.in, got, ok, err, tc.want)
		}
	}
}

func close(a, b float64) bool { return a == b || (a-b)*(a-b) < 1e-24*(a*a+b*b) }

func TestTraceTime(t *testing.T) {
	for _, tc := range []struct {
		in       string
		ms, s    float64 // In("ms"), In("s")
		str      string
		sign     int
		parseErr bool
	}{
		{in: "1", ms: 1, s: 1, str: "1", sign: 1},
		{in: "0", str: "0"},
		{in: "-1", ms: -1, s: -1, str: "-1", sign: -1},
		{in: "1ms", ms: 1, s: 0.001, str: "1ms", sign: 1},
		{in: "2s", ms: 2000, s: 2, str: "2s", sign: 1},
		{in: "250us", ms: 0.25, s: 0.00025, str: "250us", sign: 1},
		{in: "1m30s", ms: 90000, s: 90, str: "90s", sign: 1},
		{in: "1 ms", parseErr: true},
		{in: "fast", parseErr: true},
	} {
		d, err := ParseTraceTime(tc.in)
		if tc.parseErr {
			if err == nil {
				t.Errorf("%q: parsed as %v", tc.in, d)
			}
			continue
		}
		if err != nil || !close(d.In("ms"), tc.ms) || !close(d.In("s"), tc.s) || d.String() != tc.str || d.Sign() != tc.sign {
			t.Errorf("%q: %v (%v ms, %v s, %q, sign %d)", tc.in, err, d.In("ms"), d.In("s"), d.String(), d.Sign())
		}
		if s, ok := d.Seconds(); ok != strings.HasSuffix(tc.str, "s") || !close(s, tc.s) {
			t.Errorf("%q: Seconds %v %v", tc.in, s, ok)
		}
		// String reads back to the same length.
		if back, err := ParseTraceTime(d.String()); err != nil || back.In("ms") != d.In("ms") {
			t.Errorf("%q: %q reads back as %v %v", tc.in, d.String(), back, err)
		}
	}
	// YAML: numbers are trace units, strings with a unit durations.
	var cfg struct{ A, B, C TraceTime }
	if err := yaml.Unmarshal([]byte("a: 1\nb: 1ms\nc: 0.5\n"), &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.A != TraceUnits(1) || cfg.B.In("ms") != 1 || cfg.C != TraceUnits(0.5) {
		t.Errorf("%+v", cfg)
	}
	if b, err := yaml.Marshal(map[string]TraceTime{"p": TraceUnits(2)}); err != nil || string(b) != "p: \"2\"\n" {
		t.Errorf("%q %v", b, err)
	}
}

func TestDurationIn(t *testing.T) {
	for _, tc := range []struct {
		in, unit string
		want     float64
		err      bool
	}{{"1.5", "s", 1.5, false}, {"100ms", "s", 0.1, false}, {"2", "ms", 2, false}, {"10us", "ms", 0.01, false}, {"1753114530", "s", 1753114530, false}, {"soon", "s", 7, true}} {
		v := 7.0
		f := DurationIn(&v, tc.unit)
		if err := f.Set(tc.in); (err != nil) != tc.err || v != tc.want || f.Type() != "duration" {
			t.Errorf("%s in %s: %v %v", tc.in, tc.unit, v, err)
		}
		if !tc.err && f.String() != strconv.FormatFloat(tc.want, 'g', -1, 64) {
			t.Errorf("%s: String %s", tc.in, f.String())
		}
	}
}
