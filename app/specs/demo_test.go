package specs

import (
	"bytes"
	"math"
	"testing"
	"time"

	bf "github.com/tracecast/tracecast/backfill"
	fc "github.com/tracecast/tracecast/forecast"
	"github.com/tracecast/tracecast/report"
)

// TestDemoSummary: the demo headlines the forecasts' skill against the
// three baselines and the forecast policy's backfilling value, with the
// KS windows on one line after them; a skill against an exact baseline and
// an undefined value say so instead of printing NaN.
func TestDemoSummary(t *testing.T) {
	d := demoSummary{
		replay: report.Replay{ByNature: map[string]int{"Container": 3, "State": 10}, Workers: 2, End: 1000,
			StateTime: map[string]float64{"GEMM": 3, "Idle": 1}},
		ks: report.Predictions{Windows: 4, Verdicts: 3, Hits: 2, Horizon: 0.1, Alerts: map[string]int{"idle-opportunity": 1}},
		skill: []fc.Score{
			{Query: "idle>=25%", Horizon: 0.005, N: 100, MSEP: 0.001, SkillKSPaper: 0.1, SkillPersistence: 0.5, SkillClimatology: 0.9, Coverage: 0.9},
			{Query: "idle>=25%", Horizon: 0.5, N: 10, MSEP: 0.03, SkillKSPaper: math.NaN(), SkillPersistence: -0.25, SkillClimatology: 0.125, Coverage: 0.85},
		},
		backfill: &bf.Result{Rows: []bf.Row{{Policy: bf.Forecast, Alpha: 1, Value: 0.9}, {Policy: bf.Forecast, Alpha: demoAlpha, Value: 0.549}, {Policy: bf.HindsightTimeout, Alpha: demoAlpha, Value: math.NaN()}}},
	}
	var out bytes.Buffer
	if err := d.write(&out, 46*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	want := `tracecast demo: StarPU Cholesky, 2 workers, 1000 ms of execution, read in 46ms
  records: 3 containers, 10 states, 0 variables, 0 events, 0 links
  worker time by state (all imbrication levels): GEMM 75.0% Idle 25.0%
  forecasts of idle>=25% over the next H, scored against what happened (skill = 1 − MSE/MSE of the baseline; above 0 beats it):
        H  forecasts  MSE of p  vs KS windows  vs persistence  vs climatology  90% interval coverage
      5ms        100   0.00100         +10.0%          +50.0%          +90.0%                  0.900
    500ms         10   0.03000              -          -25.0%          +12.5%                  0.850
  backfilling 10ms back-end tasks on the idle workers (wait mode, α = 10), value V (1: the oracle's; 0: the better of never and greedy):
    the forecast policy 0.55; the best fixed timeout, chosen in hindsight, undefined
  KS windows (Pallipuram et al. 2014): 4 windows of 0.1 s, 3 verdicts, hit rate 66.7%; alerts: 1 idle opportunities, 0 regime changes
`
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}
