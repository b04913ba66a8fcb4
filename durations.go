package tracecast

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// units are the suffixes of a duration, longest first: a duration is
// v·mult·10^exp seconds.
var units = []struct {
	suffix string
	mult   float64
	exp    int
}{{"ns", 1, -9}, {"us", 1, -6}, {"µs", 1, -6}, {"ms", 1, -3}, {"s", 1, 0}, {"m", 60, 0}, {"h", 3600, 0}}

// scale is v·10^exp, rounded once.
func scale(v float64, exp int) float64 {
	if exp >= 0 {
		return v * math.Pow10(exp)
	}
	return v / math.Pow10(-exp)
}

// parseUnit reads a number followed by a unit (1.5ms, 500us, 2s, 1e-3s) or
// a compound duration (1m30s): the number and the unit's index in units
// (the seconds and -1 for a compound one); ok is false when s has no unit.
func parseUnit(s string) (v float64, unit int, ok bool) {
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return 0, 0, false // a plain number
	}
	for i, u := range units {
		num, found := strings.CutSuffix(s, u.suffix)
		if !found {
			continue
		}
		if v, err := strconv.ParseFloat(num, 64); err == nil {
			return v, i, true
		}
		break
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, 0, false
	}
	return d.Seconds(), -1, true
}

// TraceTime is a length of trace time: a duration with a unit (1ms, 500us,
// 2s), or a plain number in the trace's own time unit ("1.5": 1.5 ms in a
// StarPU trace, whose times are milliseconds). The zero value is 0.
type TraceTime struct {
	v    float64
	unit int // with a unit: 1 + its index in units, or -1 for seconds; 0: none
}

// TraceUnits is v in the trace's own time unit.
func TraceUnits(v float64) TraceTime { return TraceTime{v: v} }

// ParseTraceTime reads a duration with a unit or a plain number of trace
// units; it must be finite.
func ParseTraceTime(s string) (TraceTime, error) {
	var d TraceTime
	err := d.Set(s)
	return d, err
}

// In is the length in units of unit (s, ms, us, ns; another: s): a
// duration converted, a plain number as it is.
func (d TraceTime) In(unit string) float64 {
	if d.unit == 0 {
		return d.v
	}
	exp := 0 // 10^exp units a second: s 0, ms 3, us 6, ns 9
	if n, ok := UnitsPerSecond(unit); ok {
		exp = int(math.Round(math.Log10(n)))
	}
	if d.unit < 0 {
		return scale(d.v, exp)
	}
	u := units[d.unit-1]
	return scale(d.v*u.mult, u.exp+exp)
}

// Seconds is the length in seconds when it is a duration (ok); a plain
// number of trace units is not.
func (d TraceTime) Seconds() (s float64, ok bool) { return d.In("s"), d.unit != 0 }

// Set reads s (see ParseTraceTime).
func (d *TraceTime) Set(s string) error {
	s = strings.TrimSpace(s)
	v, i, ok := parseUnit(s)
	unit := 0
	if ok {
		unit = i + 1
		if i < 0 {
			unit = -1
		}
	} else {
		var err error
		if v, err = strconv.ParseFloat(s, 64); err != nil {
			return fmt.Errorf("%q is not a duration (1ms, 2s) or a number of trace time units", s)
		}
	}
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return fmt.Errorf("%q is not a finite duration", s)
	}
	*d = TraceTime{v: v, unit: unit}
	return nil
}

// String is the duration with its unit, or the plain number.
func (d TraceTime) String() string {
	s := strconv.FormatFloat(d.v, 'g', -1, 64)
	switch {
	case d.unit < 0:
		s += "s"
	case d.unit > 0:
		s += units[d.unit-1].suffix
	}
	return s
}

// Type names the flag's value in help texts.
func (d TraceTime) Type() string { return "duration" }

// Sign is -1, 0 or +1 as the length is negative, zero or positive.
func (d TraceTime) Sign() int {
	switch {
	case d.v < 0:
		return -1
	case d.v > 0:
		return 1
	}
	return 0
}

// MarshalText writes String, which UnmarshalText reads back.
func (d TraceTime) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText reads a YAML or JSON value (see ParseTraceTime).
func (d *TraceTime) UnmarshalText(b []byte) error { return d.Set(string(b)) }

// DurationValue is a command-line flag (a pflag.Value) bound to a float64
// in unit (s, ms, ...): it reads a duration with a unit (100ms) or a plain
// number in that unit.
type DurationValue struct {
	p    *float64
	unit string
}

// DurationIn binds p, in unit, to a flag.
func DurationIn(p *float64, unit string) DurationValue { return DurationValue{p, unit} }

// Set reads s.
func (v DurationValue) Set(s string) error {
	d, err := ParseTraceTime(s)
	if err == nil {
		*v.p = d.In(v.unit)
	}
	return err
}

// String is the length with a unit, what Set reads back: in the flag's
// unit ("5s", "2ms"), or a smaller one for a fraction of it ("250ms", not
// "0.25s"; "1us", not "0.001ms"). Zero is "0", which help texts leave out
// as the zero value.
func (v DurationValue) String() string {
	if *v.p == 0 {
		return "0"
	}
	val, unit := *v.p, v.unit
	smaller := map[string]string{"s": "ms", "ms": "us", "us": "ns"}
	for math.Abs(val) < 1 && smaller[unit] != "" {
		next := scale(val, 3)
		if back, err := ParseTraceTime(strconv.FormatFloat(next, 'g', -1, 64) + smaller[unit]); err != nil || back.In(v.unit) != *v.p {
			break // not exact in the smaller unit
		}
		val, unit = next, smaller[unit]
	}
	return string(AppendJSONNumber(nil, val)) + unit
}

// Type names the flag's value in help texts.
func (v DurationValue) Type() string { return "duration" }

// Seconds is a length of time in seconds, as a component option: read
// from a duration with a unit (500ms, 2s, 1m30s) or a plain number of
// seconds (YAML 0.5 or "0.5"), written with its unit ("0.5s").
type Seconds float64

// UnmarshalText reads a YAML or JSON value: a duration with a unit or a
// plain number of seconds; it must be finite.
func (s *Seconds) UnmarshalText(b []byte) error {
	d, err := ParseTraceTime(string(b))
	if err != nil {
		return fmt.Errorf("%q is not a duration (500ms, 2s) or a number of seconds", b)
	}
	*s = Seconds(d.In("s"))
	return nil
}

// MarshalText writes String, which UnmarshalText reads back.
func (s Seconds) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// String is the length in seconds with its unit: "0.5s".
func (s Seconds) String() string { return string(AppendJSONNumber(nil, float64(s))) + "s" }
