package report

import (
	"bytes"
	"fmt"
	"html/template"
	"math"
	"strconv"

	bf "github.com/tracecast/tracecast/backfill"
)

// backfillSection is the HTML report's section of `tracecast backfill`'s
// table (Page.SetBackfill): what each policy would have harvested on the
// run and its value, and the plot of V against α.
type backfillSection struct {
	Spells string
	Rows   []backfillRow
	Plot   template.HTML
}

type backfillRow struct {
	Policy, Mode, D, Alpha, Launches, Harvest, Loss, Share, Value string
	Reference                                                     bool
}

// SetBackfill adds to the page a section with a backfill table (docs/backfill.md)
// and its value plot (an SVG document, as backfill writes values.svg; nil:
// none).
func (p *Page) SetBackfill(res *bf.Result, svg []byte) {
	if res == nil || len(res.Rows) == 0 {
		return
	}
	g := func(x float64) string {
		if math.IsNaN(x) {
			return "–"
		}
		return strconv.FormatFloat(x, 'g', 4, 64)
	}
	sec := &backfillSection{Spells: fmt.Sprintf("%d idle spells, %s idle worker-seconds", res.Spells, g(res.IdleWorkerSeconds))}
	for _, r := range res.Rows {
		loss := r.Delay
		if r.Mode == string(bf.Kill) {
			loss = r.Waste
		}
		name := r.Policy
		if !math.IsNaN(r.Timeout) {
			name += " (τ=" + g(r.Timeout) + " s)"
		}
		share := "–"
		if r.OracleHarvest > 0 {
			share = strconv.FormatFloat(r.Harvest/r.OracleHarvest, 'f', 3, 64)
		}
		sec.Rows = append(sec.Rows, backfillRow{Policy: name, Mode: r.Mode, D: g(r.D), Alpha: g(r.Alpha), Launches: strconv.Itoa(r.Launches),
			Harvest: g(r.Harvest), Loss: g(loss), Share: share, Value: g(r.Value), Reference: !r.Causal})
	}
	if i := bytes.Index(svg, []byte("<svg")); i >= 0 {
		sec.Plot = template.HTML(svg[i:]) // our own plot, drawn from numbers: inline
	}
	p.backfill = sec
}
