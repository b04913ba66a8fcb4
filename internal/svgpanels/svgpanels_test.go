package svgpanels

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"gonum.org/v1/plot"
)

// TestWrite: n panels, each titled, in one SVG of n panels' height; a
// panel's error is returned and nothing is written.
func TestWrite(t *testing.T) {
	var b bytes.Buffer
	err := Write(&b, 3, func(i int) (*plot.Plot, error) {
		p := plot.New()
		p.Title.Text = "panel " + string(rune('A'+i))
		return p, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	svg := b.String()
	for _, title := range []string{"panel A", "panel B", "panel C"} {
		if !strings.Contains(svg, title) {
			t.Errorf("no %q in the SVG", title)
		}
	}
	if !strings.Contains(svg, `height="864pt"`) { // 3 × 4 in × 72 pt
		t.Errorf("not three panels high: %.200s", svg)
	}
	b.Reset()
	boom := errors.New("boom")
	if err := Write(&b, 2, func(int) (*plot.Plot, error) { return nil, boom }); !errors.Is(err, boom) || b.Len() != 0 {
		t.Errorf("err %v, %d bytes written", err, b.Len())
	}
}
