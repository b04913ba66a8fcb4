package energy

import (
	"testing"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/parsers/power"
)

// BenchmarkJoin joins 100 kHz samples (in order, then swapped pairwise
// within a 20 µs lateness window) with the demo trace's real timeline
// (9241 steps), 0.1 s windows.
func BenchmarkJoin(b *testing.B) {
	tls := demoTimelines(b, nil)
	tl := tls[DefaultNode]
	var ss []tracecast.PowerSample
	for t := tl.T0; t <= tl.End; t += 1e-5 {
		ss = append(ss, tracecast.PowerSample{T: t, Node: DefaultNode, Watts: 100 + float64(len(ss)%50)})
	}
	swapped := append([]tracecast.PowerSample(nil), ss...)
	for k := 0; k+1 < len(swapped); k += 2 {
		swapped[k], swapped[k+1] = swapped[k+1], swapped[k]
	}
	for _, bc := range []struct {
		name     string
		in       []tracecast.PowerSample
		lateness float64
	}{{"ordered", ss, 0}, {"late", swapped, 2e-5}} {
		b.Run(bc.name, func(b *testing.B) {
			var n int64
			var maxBuf int
			for b.Loop() {
				j := NewJoiner(tls, Options{Window: 0.1, Lateness: bc.lateness})
				for i := 0; i < len(bc.in); i += power.BatchSize {
					j.Add(bc.in[i:min(i+power.BatchSize, len(bc.in))])
					j.TakeWindows()
				}
				res := j.Finish()
				n += res.Stats.Samples
				maxBuf = max(maxBuf, res.Stats.MaxBuffered)
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "samples/s")
			b.ReportMetric(float64(maxBuf), "max-buffered")
		})
	}
}
