package paje

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/tracecast/tracecast"
)

// lateTrace is the StarPU demo trace (milliseconds) with one variable
// sample moved after lines 5 ms later than it.
func lateTrace(t *testing.T) []byte {
	t.Helper()
	f, err := os.Open("../../pipelines/testdata/starpu-cholesky-2cpu.trace.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(zr)
	lines := strings.Split(string(data), "\n")
	at := -1
	var t0 float64
	for i, l := range lines {
		fs := strings.Fields(l)
		if len(fs) > 2 && fs[0] == "13" {
			if v, _ := strconv.ParseFloat(fs[1], 64); v > 175 {
				at, t0 = i, v
				break
			}
		}
	}
	late := lines[at]
	lines = append(lines[:at], lines[at+1:]...)
	for i := at; i < len(lines); i++ {
		if fs := strings.Fields(lines[i]); len(fs) > 1 {
			if v, err := strconv.ParseFloat(fs[1], 64); err == nil && v > t0+5 {
				lines = append(lines[:i], append([]string{late}, lines[i:]...)...)
				return []byte(strings.Join(lines, "\n"))
			}
		}
	}
	t.Fatal("no later line")
	return nil
}

// The reorder horizon as a duration is converted to the trace's unit once
// it is known (here ms).
func TestReorderHorizonSeconds(t *testing.T) {
	trace := lateTrace(t)
	for _, tc := range []struct {
		name    string
		units   float64 // ReorderHorizon
		seconds float64 // ReorderHorizonSeconds
		late    bool    // the late sample is an error
	}{
		{name: "default (3 s)", units: -1},
		{name: "10 ms", units: -1, seconds: 0.01},
		{name: "10 trace units", units: 10},
		{name: "1 ms", units: -1, seconds: 0.001, late: true},
		{name: "0.01 trace units", units: 0.01, late: true},
		{name: "0 (pj_dump's rule)", units: 0, late: true},
	} {
		o := DefaultOptions()
		o.Name, o.ReorderHorizon, o.ReorderHorizonSeconds = "t", tc.units, tc.seconds
		_, err := Read(bytes.NewReader(trace), o, func([]tracecast.Entity) error { return nil })
		if late := err != nil && strings.Contains(err.Error(), "not time-ordered"); late != tc.late || (err != nil && !late) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}
