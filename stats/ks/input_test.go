package ks

import (
	"bytes"
	"compress/gzip"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestReadSample(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
		err  string
	}{
		{in: "1\n2\n\n# c\n 3 \n", want: []int{1, 2, 3}},
		{in: "1\n-2\n", err: `x:2: want a non-negative integer, got "-2"`},
		{in: "1\nx\n", err: `x:2: want a non-negative integer, got "x"`},
		{in: "# nothing\n\n", err: "x: no samples"},
	} {
		got, err := ReadSample(strings.NewReader(tc.in), "x")
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%q: %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%q: %v %v, want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestParseWindows(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
		err  bool
	}{
		{in: "10:30:10", want: []int{10, 20, 30}},
		{in: "10:35:10", want: []int{10, 20, 30}},
		{in: "1000, 2000,5000", want: []int{1000, 2000, 5000}},
		{in: "7", want: []int{7}},
		{in: "0:1:1", err: true},
		{in: "10:5:1", err: true},
		{in: "10:20:0", err: true},
		{in: "1,0", err: true},
		{in: "a", err: true},
		// Near MaxInt, w += step overflowed and the range never ended.
		{in: "9223372036854775806:9223372036854775807:1", want: []int{9223372036854775806, 9223372036854775807}},
		{in: "9223372036854775800:9223372036854775807:5", want: []int{9223372036854775800, 9223372036854775805}},
		{in: "1:9223372036854775807:9223372036854775807", want: []int{1}},
		// At most MaxWindows sizes.
		{in: "1:10000:1", want: seq(1, 10000)},
		{in: "1:10001:1", err: true},
		{in: "1:1000000000:1", err: true},
		{in: "1:9223372036854775807:1", err: true},
		{in: strings.Repeat("1,", 10000) + "1", err: true},
	} {
		// A range that never ends hangs here: go test's -timeout
		// reports it.
		got, err := ParseWindows(tc.in)
		if (err != nil) != tc.err || !slices.Equal(got, tc.want) {
			t.Errorf("%.60q: %d sizes %.80v, %v", tc.in, len(got), got, err)
		}
	}
}

func seq(from, to int) []int {
	var s []int
	for i := from; i <= to; i++ {
		s = append(s, i)
	}
	return s
}

func TestCheckAlpha(t *testing.T) {
	for _, tc := range []struct {
		alpha float64
		ok    bool
	}{
		{0.05, true}, {1e-7, true}, {0.999, true},
		{0, false}, {-1, false}, {1, false}, {1.5, false}, {math.NaN(), false}, {math.Inf(1), false},
	} {
		if err := CheckAlpha(tc.alpha); (err == nil) != tc.ok {
			t.Errorf("CheckAlpha(%g): %v, want ok %v", tc.alpha, err, tc.ok)
		}
	}
}

func TestTestSamplesRecord(t *testing.T) {
	r := TestSamples([]int{1, 2, 2, 3, 0, 1}, []int{2, 3, 3, 4, 5}, Matlab, 0.05)
	rec := r.Record(0.05)
	if rec.N1 != 6 || rec.N2 != 5 || rec.DNum != 19 || rec.DDen != 30 || !rec.Hit || rec.Reject || rec.Method != "matlab" || rec.Alpha != 0.05 {
		t.Fatalf("%+v", rec)
	}
	var b strings.Builder
	if err := r.WriteJSON(&b, 0.05); err != nil || !strings.HasPrefix(b.String(), `{"record":"kstest","n1":6,"n2":5,`) || !strings.HasSuffix(b.String(), "}\n") {
		t.Errorf("%q %v", b.String(), err)
	}
}

func TestReadSampleFile(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "a.txt")
	os.WriteFile(plain, []byte("1\n2\n"), 0o644)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("3\n4\n"))
	zw.Close()
	zipped := filepath.Join(dir, "b.txt.gz")
	os.WriteFile(zipped, gz.Bytes(), 0o644)
	for path, want := range map[string][]int{plain: {1, 2}, zipped: {3, 4}} {
		if got, err := ReadSampleFile(path); err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: %v %v", path, got, err)
		}
	}
	if _, err := ReadSampleFile(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing file read")
	}
}

// The ks command reads any non-negative int: a histogram over 0..max value
// made "ks" panic (makeslice) or run out of memory on one large value.
// The test depends only on the order of the values, so TestSamples must give
// the same result for samples mapped by any increasing function.
func TestTestSamplesLargeValues(t *testing.T) {
	a, b := []int{1, 2, 2, 3, 0, 1}, []int{2, 3, 3, 4, 5}
	big := func(xs []int) []int {
		out := make([]int, len(xs))
		for i, x := range xs {
			out[i] = x * (math.MaxInt / 8)
		}
		return out
	}
	for _, m := range Methods {
		want := TestSamples(a, b, m, 0.05)
		got := TestSamples(big(a), big(b), m, 0.05)
		if got != want {
			t.Errorf("%s: values scaled to 2^63: %+v, want %+v", m, got, want)
		}
	}
}
