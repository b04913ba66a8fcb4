package forecast

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

func TestWriteSummary(t *testing.T) {
	var b bytes.Buffer
	err := WriteSummary(&b, Summary{Forecasts: 12, Run: "r", Method: "auto", Threshold: 0.8,
		Scores: []Score{{Query: "idle>=25%", Horizon: 0.01, N: 12, MSEP: 0.01, SkillKSPaper: 0.5, SkillPersistence: math.NaN(), Coverage: 0.9}},
		Opened: map[string]int{"idle-opportunity": 2}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"12 forecasts of run r (method auto), scored against what happened:\n\n", "idle>=25%", "+50.0%",
		"alerts: 2 idle-opportunity episodes (p ≥ 0.8), 0 regime-change episodes\n", "skill = 1 − MSE/MSE(baseline)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
}

// The reliability bins' edges are tenths as written (the upper edge was
// Lo + 0.1: 0.30000000000000004, 0.7999999999999999).
func TestReliabilityEdges(t *testing.T) {
	var sc Score
	for b := range sc.Reliability {
		sc.Reliability[b].Lo = float64(b) / 10
	}
	out, err := sc.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"lo":0.2,"hi":0.3,`, `"lo":0.7,"hi":0.8,`, `"lo":0.9,"hi":1,`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("no %s in %s", want, out)
		}
	}
}
