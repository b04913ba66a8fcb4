package forecast

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"text/tabwriter"
)

// WriteTable prints scores as a table for people: per (query, horizon), the
// forecasts scored, the MSE of p and of mean, the skill against each
// baseline (1 − MSE/MSE_baseline: above 0 beats it) and the interval
// coverage.
func WriteTable(w io.Writer, scores []Score) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "query\thorizon\tforecasts\tmse_p\tskill_vs_ks-paper\tskill_vs_persistence\tskill_vs_climatology\tcoverage\tmse_mean\t\n")
	for _, s := range scores {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.5f\t%s\t%s\t%s\t%.3f\t%.5f\t\n", s.Query, HorizonLabel(s.Horizon), s.N, s.MSEP,
			pct(s.SkillKSPaper), pct(s.SkillPersistence), pct(s.SkillClimatology), s.Coverage, s.MSEMean)
	}
	return tw.Flush()
}

func pct(x float64) string {
	if math.IsNaN(x) {
		return "-"
	}
	return fmt.Sprintf("%+.1f%%", 100*x)
}

// MarshalJSON writes a score with snake_case names, "record": "score", and
// null for a skill against an exact baseline.
func (s Score) MarshalJSON() ([]byte, error) {
	num := func(x float64) any {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil
		}
		return x
	}
	bins := make([]map[string]any, 0, len(s.Reliability))
	for _, b := range s.Reliability {
		bins = append(bins, map[string]any{"lo": b.Lo, "hi": b.Lo + 0.1, "n": b.N, "mean_p": num(b.MeanP), "mean_outcome": num(b.MeanOutcome)})
	}
	return json.Marshal(map[string]any{"record": "score", "run": s.Run, "query": s.Query, "horizon": s.Horizon, "method": s.Method,
		"n": s.N, "mse_p": s.MSEP, "mse_mean": s.MSEMean, "mse_persistence": s.MSEPersistence, "mse_climatology": s.MSEClimatology,
		"mse_ks_paper": s.MSEKSPaper, "skill_persistence": num(s.SkillPersistence), "skill_climatology": num(s.SkillClimatology),
		"skill_ks_paper": num(s.SkillKSPaper), "coverage": num(s.Coverage), "reliability": bins})
}
