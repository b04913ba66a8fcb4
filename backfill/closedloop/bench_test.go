package closedloop

import (
	"testing"

	bf "github.com/tracecast/tracecast/backfill"
)

// BenchmarkClosedLoop is one closed-loop run of the forecast policy: 2000
// tasks of 10 ms (CV 1) on 16 workers, back-end tasks of 1 ms, the
// baseline run included; bytes are the primary's tasks.
func BenchmarkClosedLoop(b *testing.B) {
	c := DefaultConfig()
	c.SynthConfig.Tasks, c.SynthConfig.Workers, c.SynthConfig.Levels = 2000, 16, 125
	c.SynthConfig.Codelets = "dag_task:10:1:1"
	c.Tasks, c.Policies = []string{"1ms"}, []string{bf.Forecast}
	b.ReportAllocs()
	b.SetBytes(int64(c.SynthConfig.Tasks))
	for b.Loop() {
		if _, err := Run(c, nil); err != nil {
			b.Fatal(err)
		}
	}
}
