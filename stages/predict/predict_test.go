package predict

import (
	"testing"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/stages/signal"
	"github.com/tracecast/tracecast/stats/ks"
)

func TestParseQuery(t *testing.T) {
	cases := []struct {
		in      string
		r       int
		class   signal.Class
		atLeast int
		bad     bool
	}{
		{"idle>=25%", 10, signal.Idle, 3, false},
		{"idle >= 25 %", 12, signal.Idle, 3, false},
		{"compute>=3", 12, signal.Compute, 3, false},
		{"comm>=0%", 4, signal.Comm, 0, false},
		{"idle>=100%", 4, signal.Idle, 4, false},
		{"idle>=5", 4, 0, 0, true},
		{"idle>=2.5", 4, 0, 0, true},
		{"busy>=1", 4, 0, 0, true},
		{"idle<=1", 4, 0, 0, true},
		{"idle>=101%", 4, 0, 0, true},
		// Exactly ⌈pct·R⌉: 0.07·100 is 7.000000000000001 in floating point.
		{"idle>=7%", 100, signal.Idle, 7, false},
		{"idle>=28%", 25, signal.Idle, 7, false},
		// Counts beyond the int range used to wrap to a negative k that
		// passed the k > R check (at_least < 0, and P(X >= k) then
		// looped over 2^63 values).
		{"idle>=9223372036854775808", 4, 0, 0, true},
		{"idle>=99999999999999999999", 4, 0, 0, true},
	}
	for _, c := range cases {
		q, err := ParseQuery(c.in, c.r)
		if c.bad != (err != nil) {
			t.Errorf("%q: err %v", c.in, err)
			continue
		}
		if !c.bad && (q.Class != c.class || q.AtLeast != c.atLeast) {
			t.Errorf("%q: %+v", c.in, q)
		}
	}
}

// sameCounts is a stand-in KS: a hit when both windows have the same
// histogram.
func sameCounts(a, b *ks.Hist) (float64, float64, bool) {
	for x := 0; x <= a.R(); x++ {
		if a.Count(x) != b.Count(x) {
			return 1, 0, false
		}
	}
	return 0, 1, true
}

func TestEngine(t *testing.T) {
	q, _ := ParseQuery("idle>=50%", 4)
	var wins []tracecast.Window
	var preds []tracecast.Prediction
	var verdicts []tracecast.Verdict
	var alerts []tracecast.Alert
	e := NewEngine(Config{Trace: "t", Class: signal.Idle, R: 4, Window: 4, Period: 250, T0: 100, PerSec: 1000,
		Queries: []Query{q}, Compare: sameCounts, Method: "test", IdleThreshold: 0.5, RegimeMisses: 2},
		Sink{Window: func(w tracecast.Window) { wins = append(wins, w) },
			Prediction: func(p tracecast.Prediction) { preds = append(preds, p) },
			Verdict:    func(v tracecast.Verdict) { verdicts = append(verdicts, v) },
			Alert:      func(a tracecast.Alert) { alerts = append(alerts, a) }})
	// windows: [2 2 0 0] [0 2 2 0] (same histogram: hit) [4 4 4 4] (miss) [0 0 0 1] (miss) + 2 samples
	for _, x := range []int{2, 2, 0, 0, 0, 2, 2, 0, 4, 4, 4, 4, 0, 0, 0, 1, 3, 3} {
		e.Add(x)
	}
	if len(wins) != 4 || wins[0].Compared || !wins[1].Hit || wins[2].Hit || wins[3].Hit {
		t.Fatalf("windows: %+v", wins)
	}
	if wins[1].Start != 1100 || wins[1].End != 2100 {
		t.Errorf("window 1 spans [%v, %v), want [1100, 2100)", wins[1].Start, wins[1].End)
	}
	// One prediction per complete window, for the next one.
	if len(preds) != 4 || preds[0].Window != 1 || preds[0].Likelihood != 0.5 || preds[2].Likelihood != 1 || preds[3].Likelihood != 0 {
		t.Fatalf("predictions: %+v", preds)
	}
	if preds[0].HorizonS != 1 || preds[0].ID != "t/w1/idle>=50%" || preds[0].AtLeast != 2 {
		t.Errorf("prediction 0: %+v", preds[0])
	}
	// Verdicts for windows 1..3; window 4 is partial and gets none.
	if len(verdicts) != 3 || !verdicts[0].Hit || verdicts[1].Hit || verdicts[0].PredictionID != preds[0].ID || verdicts[0].ID != preds[0].ID+"/verdict" || verdicts[1].Observed != 1 {
		t.Fatalf("verdicts: %+v", verdicts)
	}
	// Alerts: idle opportunities for windows 1, 2 (0.5), 3 (1.0); a regime
	// change when window 3 makes the second miss in a row.
	kinds := map[string]int{}
	for _, a := range alerts {
		kinds[a.Kind]++
	}
	if kinds["idle-opportunity"] != 3 || kinds["regime-change"] != 1 {
		t.Fatalf("alerts: %+v", alerts)
	}
}
