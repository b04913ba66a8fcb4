package iobench

import (
	"bytes"
	"strings"
	"testing"
)

func TestPredictionTable(t *testing.T) {
	act, e := 2.0, 10.0
	for _, tc := range []struct {
		name string
		p    Prediction
		want []string
	}{
		{"actual", Prediction{Reference: "ext4", Target: "tmpfs", RefTotal: 3, Predicted: 2.2, Actual: &act, ErrorPct: &e,
			Categories: []PredCat{{Category: "read/<4K/seq", Calls: 4, RefTime: 1, Ratio: 0.5, Benchmarked: true, Predicted: 0.5}}},
			[]string{"read/<4K/seq", "0.500", "total (ext4 → tmpfs)", "+10.0"}},
		{"not benchmarked", Prediction{Reference: "a", Target: "b", Unbenchmarked: 0.25,
			Categories: []PredCat{{Category: "sync", Calls: 1, Ratio: 1}}},
			[]string{"(1)", "  -  ", "25.0% of the reference I/O time is in categories not benchmarked (ratio 1)"}},
	} {
		var b bytes.Buffer
		if err := tc.p.WriteTable(&b); err != nil {
			t.Fatal(err)
		}
		for _, w := range tc.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s: lacks %q:\n%s", tc.name, w, b.String())
			}
		}
	}
}
