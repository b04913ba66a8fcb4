package report

import (
	"bytes"
	"strings"
	"testing"

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
