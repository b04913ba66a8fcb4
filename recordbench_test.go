package tracecast

import (
	"math"
	"testing"
	"time"
)

// BenchmarkAppendJSON encodes the record types a run emits most of
// (forecasts and outcomes: one per issue time and horizon; signal samples;
// tasks) as the JSON-lines and Kafka sinks do, into a reused buffer.
func BenchmarkAppendJSON(b *testing.B) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 678999, time.UTC)
	e := 1.25
	recs := []struct {
		name string
		rec  interface{ AppendJSON([]byte) []byte }
	}{
		{"sample", Sample{K: 123456, T: 1234.567, X: 3}},
		{"window", Window{Trace: "run-1", Class: "idle", Index: 12, Start: 1200, End: 1300, N: 100, D: 0.25, P: 0.5, Hit: true, Compared: true}},
		{"prediction", Prediction{ID: "run-1/w12/idle>=25%", Trace: "run-1", Window: 12, Start: 1, End: 2, HorizonS: 0.1, Class: "idle", Query: "idle>=25%", AtLeast: 1, R: 2, Likelihood: 0.75, EmittedAt: at}},
		{"forecast", Forecast{ID: "run-1/idle>=25%/0.05/1234", Run: "run-1", Class: "idle", Query: "idle>=25%", Threshold: 1, Workers: 2, IssuedAt: 1.2345, Horizon: 0.05, P: 0.123456789, Mean: 0.0876, WorkerSeconds: 0.00876, Lo: 0, Hi: 0.5, Method: "auto"}},
		{"outcome", Outcome{ID: "run-1/idle>=25%/0.05/1234/outcome", ForecastID: "run-1/idle>=25%/0.05/1234", Run: "run-1", Query: "idle>=25%", Threshold: 1, Workers: 2, IssuedAt: 1.2345, Horizon: 0.05, P: 0.12, Lo: math.NaN(), Hi: math.NaN(), Mean: 0.08, ObservedP: 0.1, ObservedMean: 0.07, Inside: true, Method: "auto"}},
		{"power", PowerSample{T: 12.5, Node: "n0", Watts: 91.5, Mean: true, Since: 12.25}},
		{"task", Task{ID: "run-1/42", Run: "run-1", Codelet: "dgemm", Worker: "CPU0", WorkerKind: "CPU", JobID: "42", Footprint: "abcd1234", StartS: 1.5, DurationS: 0.02, EnergyJ: &e, Params: map[string]float64{"Size": 960, "h0_nx": 960, "h0_ny": 960}}},
		{"decision", Decision{ID: "run-1/forecast/7", Policy: "forecast", Run: "run-1", Worker: "CPU0", Start: 1.5, D: 0.01, Overhead: 0.001, Mode: "wait", Alpha: 10, Timeout: math.NaN(), Outcome: "completed", P: 0.9}},
	}
	for _, r := range recs {
		b.Run(r.name, func(b *testing.B) {
			buf := r.rec.AppendJSON(nil)
			b.SetBytes(int64(len(buf)))
			b.ReportAllocs()
			for b.Loop() {
				buf = r.rec.AppendJSON(buf[:0])
			}
		})
	}
}
