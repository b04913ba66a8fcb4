package tracecast

import (
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
		str      string // String after Set
	}{{"1.5", "s", 1.5, false, "1.5s"}, {"100ms", "s", 0.1, false, "100ms"}, {"2", "ms", 2, false, "2ms"}, {"10us", "ms", 0.01, false, "10us"},
		{"1753114530", "s", 1753114530, false, "1753114530s"}, {"soon", "s", 7, true, ""}} {
		v := 7.0
		f := DurationIn(&v, tc.unit)
		if err := f.Set(tc.in); (err != nil) != tc.err || v != tc.want || f.Type() != "duration" {
			t.Errorf("%s in %s: %v %v", tc.in, tc.unit, v, err)
		}
		if !tc.err && f.String() != tc.str {
			t.Errorf("%s: String %s, want %s", tc.in, f.String(), tc.str)
		}
	}
}

// TestSeconds: a Seconds option reads a duration with a unit or a plain
// number of seconds, from YAML (numbers and strings) as from text, and
// writes itself back with its unit.
func TestSeconds(t *testing.T) {
	for _, tc := range []struct {
		yaml string
		want float64
		err  bool
	}{
		{yaml: "500ms", want: 0.5},
		{yaml: "2s", want: 2},
		{yaml: "1m30s", want: 90},
		{yaml: "250us", want: 250e-6},
		{yaml: "-1.5s", want: -1.5},
		{yaml: "5", want: 5},
		{yaml: "0.1", want: 0.1},
		{yaml: "1e-3", want: 1e-3},
		{yaml: `"5"`, want: 5},
		{yaml: "0", want: 0},
		{yaml: "fast", err: true},
		{yaml: "5 parsecs", err: true},
		{yaml: ".inf", err: true},
	} {
		var v struct {
			W Seconds `yaml:"w"`
		}
		err := yaml.Unmarshal([]byte("w: "+tc.yaml), &v)
		if (err != nil) != tc.err || !tc.err && !close(float64(v.W), tc.want) {
			t.Errorf("w: %s: %v %v, want %v", tc.yaml, float64(v.W), err, tc.want)
			continue
		}
		if tc.err {
			continue
		}
		b, err := yaml.Marshal(v)
		var back struct {
			W Seconds `yaml:"w"`
		}
		if err != nil || yaml.Unmarshal(b, &back) != nil || back.W != v.W {
			t.Errorf("%s: round trip %q -> %v", tc.yaml, b, back.W)
		}
	}
	for _, tc := range []struct {
		v    Seconds
		want string
	}{{5, "5s"}, {0.5, "0.5s"}, {0, "0s"}, {-1.5, "-1.5s"}} {
		if b, _ := tc.v.MarshalText(); string(b) != tc.want || tc.v.String() != tc.want {
			t.Errorf("%v: %q %q, want %q", float64(tc.v), b, tc.v.String(), tc.want)
		}
	}
}

// TestDurationValueDefault: a duration flag's default is printed with a
// unit ("5s", not "5"; a fraction in a smaller one, "250ms"), which reads
// back exactly; zero stays "0", which pflag leaves out of the help.
func TestDurationValueDefault(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		unit string
		want string
	}{{5, "s", "5s"}, {0.25, "s", "250ms"}, {2, "ms", "2ms"}, {0, "s", "0"}, {0.001, "ms", "1us"}, {1e-3, "us", "1ns"}, {1.5e-4, "ns", "0.00015ns"}, {-0.5, "s", "-500ms"}} {
		v := tc.v
		dv := DurationIn(&v, tc.unit)
		if got := dv.String(); got != tc.want {
			t.Errorf("%g %s: %q, want %q", tc.v, tc.unit, got, tc.want)
		}
		if err := dv.Set(dv.String()); err != nil || v != tc.v {
			t.Errorf("%g %s: read back as %g, %v", tc.v, tc.unit, v, err)
		}
	}
}
