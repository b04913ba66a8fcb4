package paje

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/internal/gziptest"
	"github.com/tracecast/tracecast/internal/pajetest"
)

// The reorder horizon as a duration is converted to the trace's unit once
// it is known (here ms).
func TestReorderHorizonSeconds(t *testing.T) {
	trace := pajetest.LateSample(t, gziptest.ReadFile(t, starpuTrace))
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
