package study

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/stats/ks"
)

func TestParseInts(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
		err  string
	}{
		{in: "8,16, 32", want: []int{8, 16, 32}},
		{in: "1000:1400:200", want: []int{1000, 1200, 1400}},
		{in: "8,0", err: `bad list "8,0"`},
		{in: "x", err: `bad list "x"`},
		{in: "0:1:1", err: `--windows "0:1:1": want FROM:TO:STEP with positive integers`},
	} {
		got, err := ParseInts(tc.in)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%q: %v, want %q", tc.in, err, tc.err)
			}
		} else if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%q: %v %v", tc.in, got, err)
		}
	}
}

func TestTrainConfigParse(t *testing.T) {
	ok := TrainConfig{AnalyzeConfig: AnalyzeConfig{MaxSamples: 10, Alpha: 0.05}, Target: 0.95, Degree: 4, Jobs: 1}
	with := func(edit func(*TrainConfig)) TrainConfig {
		c := ok
		edit(&c)
		return c
	}
	for _, tc := range []struct {
		name            string
		c               TrainConfig
		windows, method string
		err             string
	}{
		{name: "ok", c: ok, windows: "10:30:10", method: "scipy"},
		{name: "method", c: ok, windows: "10", method: "foo", err: `ks: unknown p-value method "foo" (want "matlab", "scipy" or "r")`},
		{name: "windows", c: ok, windows: "0:1:1", method: "matlab", err: `--windows "0:1:1": want FROM:TO:STEP with positive integers`},
		{name: "max samples", c: with(func(c *TrainConfig) { c.MaxSamples = 0 }), windows: "10", method: "matlab", err: "--max-samples must be positive (got 0)"},
		{name: "target", c: with(func(c *TrainConfig) { c.Target = 2 }), windows: "10", method: "matlab", err: "--target 2: want (0, 1]"},
		{name: "target NaN", c: with(func(c *TrainConfig) { c.Target = math.NaN() }), windows: "10", method: "matlab", err: "--target NaN: want (0, 1]"},
		{name: "degree 0", c: with(func(c *TrainConfig) { c.Degree = 0 }), windows: "10", method: "matlab", err: "--degree 0: want an integer in [1, 10]"},
		{name: "degree 11", c: with(func(c *TrainConfig) { c.Degree = 11 }), windows: "10", method: "matlab", err: "--degree 11: want an integer in [1, 10]"},
		{name: "jobs", c: with(func(c *TrainConfig) { c.Jobs = 0 }), windows: "10", method: "matlab", err: "--jobs 0: want at least 1"},
		{name: "alpha", c: with(func(c *TrainConfig) { c.Alpha = 1 }), windows: "10", method: "matlab", err: "--alpha 1: a significance level must be in (0, 1), e.g. 0.05"},
		{name: "period", c: with(func(c *TrainConfig) { c.Period = tracecast.TraceUnits(-1) }), windows: "10", method: "matlab", err: "--period -1: must be positive (0: per trace)"},
	} {
		err := tc.c.Parse(tc.windows, tc.method)
		if tc.err == "" {
			if err != nil || tc.c.Method != ks.SciPy || !slices.Equal(tc.c.Windows, []int{10, 20, 30}) {
				t.Errorf("%s: %v %+v", tc.name, err, tc.c)
			}
			continue
		}
		var ue *UsageError
		if !errors.As(err, &ue) || err.Error() != tc.err {
			t.Errorf("%s: %v, want the usage error %q", tc.name, err, tc.err)
		}
	}
}

func TestReproduceParseSizes(t *testing.T) {
	for _, tc := range []struct {
		sizes, clusters string
		err             string
	}{
		{"1000:1400:200", "8,16", ""},
		{"x", "8", `--sizes: bad list "x"`},
		{"1000", "8,0", `--cluster-sizes: bad list "8,0"`},
	} {
		var c ReproduceConfig
		err := c.ParseSizes(tc.sizes, tc.clusters)
		var ue *UsageError
		switch {
		case tc.err == "" && (err != nil || !slices.Equal(c.Sizes, []int{1000, 1200, 1400}) || !slices.Equal(c.ClusterSizes, []int{8, 16}) || c.SizesSpec != tc.sizes):
			t.Errorf("%s %s: %v %+v", tc.sizes, tc.clusters, err, c)
		case tc.err != "" && (!errors.As(err, &ue) || err.Error() != tc.err):
			t.Errorf("%s %s: %v, want %q", tc.sizes, tc.clusters, err, tc.err)
		}
	}
}

func TestTrainFromNothing(t *testing.T) {
	var ue *UsageError
	if _, err := TrainFrom(t.TempDir(), nil, t.TempDir(), &TrainConfig{}); !errors.As(err, &ue) {
		t.Errorf("no trace: %v", err)
	}
}
