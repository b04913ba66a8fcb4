package predict

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/tracecast/tracecast"
)

func TestResultsJSONL(t *testing.T) {
	var r Results
	ctx := context.Background()
	meta := map[string]string{"period": "1"}
	r.Write(ctx, tracecast.Batch{Items: []tracecast.Window{{Trace: "t", Index: 0}, {Trace: "t", Index: 1}}, Meta: meta})
	r.Write(ctx, tracecast.Batch{Items: []tracecast.Prediction{{ID: "t/w1/idle>=25%", Query: "idle>=25%"}}})
	r.Write(ctx, tracecast.Batch{Items: []tracecast.Verdict{{ID: "t/w1/idle>=25%/verdict"}}})
	r.Write(ctx, tracecast.Batch{Items: []tracecast.Alert{{ID: "a"}}})
	r.Write(ctx, tracecast.Batch{Items: []tracecast.Entity{{}}}) // other records: ignored
	if r.Meta["period"] != "1" || len(r.Windows) != 2 || len(r.Predictions) != 1 || len(r.Verdicts) != 1 || len(r.Alerts) != 1 {
		t.Fatalf("%+v", r)
	}
	for _, tc := range []struct {
		windows bool
		records []string
	}{
		{false, []string{"prediction", "verdict", "alert"}},
		{true, []string{"window", "window", "prediction", "verdict", "alert"}},
	} {
		var b bytes.Buffer
		if err := r.WriteJSONL(&b, tc.windows); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(b.String()), "\n")
		if len(lines) != len(tc.records) {
			t.Fatalf("windows %v: %d lines:\n%s", tc.windows, len(lines), b.String())
		}
		for i, l := range lines {
			if !strings.Contains(l, `"record":"`+tc.records[i]+`"`) {
				t.Errorf("line %d: %s, want record %s", i, l, tc.records[i])
			}
		}
		// "record" first, queries not HTML-escaped.
		if p := lines[len(lines)-3]; !strings.HasPrefix(p, `{"record":"prediction",`) || !strings.Contains(p, `"query":"idle>=25%"`) {
			t.Errorf("prediction line %s", p)
		}
	}
}
