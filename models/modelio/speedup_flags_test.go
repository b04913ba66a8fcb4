package modelio

import (
	"math"
	"strings"
	"testing"
)

// TestEnergySpeedupGiven: energy-speedup takes the idle fraction or the
// two energies, never both, and says which are missing.
func TestEnergySpeedupGiven(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	for _, c := range []struct {
		s, ei, ed *float64
		want      string // an error, or "" for an answer
	}{
		{f(0.5), nil, nil, ""},
		{nil, f(10), f(30), ""},
		{f(0.5), f(10), nil, "not both"},
		{f(0.5), nil, f(30), "not both"},
		{nil, f(10), nil, "give --idle-fraction, or --idle-energy and --dynamic-energy"},
		{nil, nil, nil, "give --idle-fraction, or --idle-energy and --dynamic-energy"},
	} {
		res, err := EnergySpeedup(2, c.s, c.ei, c.ed)
		switch {
		case c.want == "" && (err != nil || res["energy_speedup"] <= 0):
			t.Errorf("%v %v %v: %v %v", c.s, c.ei, c.ed, res, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%v %v %v: error %v, want %q", c.s, c.ei, c.ed, err, c.want)
		}
	}
}

// TestOperatingPoint: a CPU share above 1 is a percentage; 0 only where
// the model allows it; NaN and an infinite frequency are refused.
func TestOperatingPoint(t *testing.T) {
	for _, c := range []struct {
		cpu, freq float64
		zero      bool
		want      float64
		ok        bool
	}{
		{0.5, 2e9, false, 0.5, true},
		{50, 2e9, false, 0.5, true},
		{0, 2e9, true, 0, true},
		{0, 2e9, false, 0, false},
		{math.NaN(), 2e9, true, 0, false},
		{0.5, math.Inf(1), true, 0, false},
		{0.5, 0, true, 0, false},
		{101, 2e9, true, 0, false},
	} {
		got, err := OperatingPoint(c.cpu, c.freq, c.zero)
		if (err == nil) != c.ok || c.ok && got != c.want {
			t.Errorf("OperatingPoint(%g, %g, %v) = %g, %v", c.cpu, c.freq, c.zero, got, err)
		}
		if err != nil && !strings.Contains(err.Error(), CPURange(c.zero)) {
			t.Errorf("error %q does not give the range %s", err, CPURange(c.zero))
		}
	}
}
