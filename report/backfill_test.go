package report

import (
	"bytes"
	"math"
	"strings"
	"testing"

	bf "github.com/tracecast/tracecast/backfill"
)

// TestBackfillSection: the section shows each row of the table, the
// references marked, an undefined V as a dash, and the plot inline.
func TestBackfillSection(t *testing.T) {
	nan := math.NaN()
	res := &bf.Result{Spells: 12, IdleWorkerSeconds: 0.5, Rows: []bf.Row{
		{Policy: "forecast", Mode: "wait", D: 0.01, Alpha: 10, Timeout: nan, Launches: 7, Harvest: 0.07, Delay: 0.002, OracleHarvest: 0.1, Value: 0.61, Causal: true},
		{Policy: "hindsight-timeout", Mode: "wait", D: 0.01, Alpha: 10, Timeout: 0.0005, Launches: 8, Harvest: 0.08, OracleHarvest: 0.1, Value: nan},
	}}
	p := &Page{}
	p.SetBackfill(res, []byte(`<?xml version="1.0"?><svg id="v"></svg>`))
	var b bytes.Buffer
	if err := p.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, want := range []string{`<table id="backfill-values">`, `<td style="text-align:left">forecast</td><td>wait</td><td>0.01</td><td>10</td><td>7</td><td>0.07</td><td>0.002</td><td>0.700</td><td>0.61</td>`,
		`hindsight-timeout (τ=0.0005 s) *`, `<td>–</td></tr>`, `<div id="backfill-plot"><svg id="v"></svg></div>`, "12 idle spells, 0.5 idle worker-seconds"} {
		if !strings.Contains(html, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	if strings.Contains(html, "<?xml") {
		t.Error("the plot's XML declaration is in the page")
	}
	p = &Page{}
	p.SetBackfill(&bf.Result{}, nil)
	if b.Reset(); p.WriteHTML(&b) != nil || strings.Contains(b.String(), "backfill-values") {
		t.Error("a section without rows")
	}
}
