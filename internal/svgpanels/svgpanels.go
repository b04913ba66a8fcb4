// Package svgpanels writes plots stacked as panels, one under the other,
// into one SVG: the layout of the backfill value plot and of the closed
// loop's frontier, one panel per back-end task length.
package svgpanels

import (
	"io"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Width and PanelHeight are a panel's size.
const (
	Width       = 7 * vg.Inch
	PanelHeight = 4 * vg.Inch
)

// Write draws n panels from the top down, panel i being what plot(i)
// returns, and writes the SVG to w.
func Write(w io.Writer, n int, panel func(i int) (*plot.Plot, error)) error {
	height := vg.Length(n) * PanelHeight
	c := vgsvg.New(Width, height)
	dc := draw.New(c)
	for i := range n {
		p, err := panel(i)
		if err != nil {
			return err
		}
		top := height - vg.Length(i)*PanelHeight
		p.Draw(draw.Crop(dc, 0, 0, top-PanelHeight, -(height - top)))
	}
	_, err := c.WriteTo(w)
	return err
}
