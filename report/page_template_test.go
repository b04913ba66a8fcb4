package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tracecast/tracecast/models/modelio"
	"github.com/tracecast/tracecast/stages/energy"
)

// The page template is parsed on first use (pageTmpl), no longer when the
// package is initialised, so a template that does not parse or execute no
// longer fails every test of the package at start-up: this test, which needs
// no browser, parses it and executes it with and without the energy section.
func TestPageTemplate(t *testing.T) {
	if first, again := pageTmpl(), pageTmpl(); first != again {
		t.Fatal("the page template is parsed more than once")
	}
	for _, tc := range []struct {
		name string
		p    func(t *testing.T) *Page
		want []string
	}{
		{"plain", func(t *testing.T) *Page { return page(t, demoTrace, PageOptions{}) },
			[]string{"<title>tracecast report: " + demoTrace + "</title>", "const DATA = {"}},
		{"energy", func(t *testing.T) *Page {
			return energyPage(t, demoTrace, EnergyInputs{Power: []string{"../testdata/power/cholesky-2cpu.rapl.csv.gz"}, Stage: energy.DefaultStageConfig()})
		}, []string{"<title>tracecast report: " + demoTrace + "</title>", "const DATA = {", `<table id="energy-table">`, `data-class="total"`}},
		{"starpu", func(t *testing.T) *Page {
			p := page(t, demoTrace, PageOptions{})
			s, err := modelio.FitStarPUDefaults("../models/starpudir/testdata/codelets")
			if err != nil {
				t.Fatal(err)
			}
			p.SetStarPU(s)
			return p
		}, []string{`<table id="starpu-models">`, "<td>mlr_final/cpu0_impl0</td><td>420</td>", "<td>chol_model_11/cpu0_impl0</td><td>4</td>",
			`data-codelet="mlr_final"`, "declared monomials, least squares: Duration = ", "to write with fit-model --write-back: mlr_final.vm cpu0_impl0",
			`data-codelet="mlr_init"`, "declares no monomials"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tc.p(t).WriteHTML(&b); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("the page lacks %q", w)
				}
			}
			if strings.Contains(out, "{{") || !strings.HasSuffix(strings.TrimSpace(out), "</html>") {
				t.Errorf("the page is not fully rendered: ...%s", out[max(0, len(out)-200):])
			}
		})
	}
}
