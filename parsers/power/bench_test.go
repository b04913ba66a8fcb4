package power

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/tracecast/tracecast"
)

func benchInput(format string, n int) []byte {
	var b bytes.Buffer
	switch format {
	case "csv":
		b.WriteString("time,node,watts\n")
		for i := range n {
			fmt.Fprintf(&b, "%.2f,taurus-%d,%.2f\n", float64(i)*0.02, i%4, 100+float64(i%700)/10)
		}
	case "jsonl":
		for i := range n {
			fmt.Fprintf(&b, "{\"time\":%.2f,\"node\":\"taurus-%d\",\"watts\":%.2f}\n", float64(i)*0.02, i%4, 100+float64(i%700)/10)
		}
	case "rapl":
		b.WriteString("time,node,energy_uj,max_energy_range_uj\n")
		for i := range n {
			fmt.Fprintf(&b, "%.3f,pkg-%d,%d,262143328850\n", float64(i/4)*0.05, i%4, (int64(i/4)*3_000_000)%262143328850)
		}
	}
	return b.Bytes()
}

func BenchmarkRead(b *testing.B) {
	const n = 200_000
	for _, format := range []string{"csv", "rapl", "jsonl"} {
		in := benchInput(format, n)
		b.Run(format, func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			var total int64
			for b.Loop() {
				st, err := Read(bytes.NewReader(in), Options{}, func([]tracecast.PowerSample) error { return nil })
				if err != nil {
					b.Fatal(err)
				}
				total += st.Samples
			}
			b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "samples/s")
		})
	}
}
