package iobench

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteTable prints a prediction as a table for people: per category, the
// calls, the reference time, the ratio, the predicted and actual times and
// the error, then the total and the share of the reference time that was
// not benchmarked.
func (p Prediction) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "category\tcalls\tref_s\tratio\tpredicted_s\tactual_s\terror_%%\t\n")
	opt := func(v *float64, f string) string {
		if v == nil {
			return "-"
		}
		return fmt.Sprintf(f, *v)
	}
	for _, c := range p.Categories {
		ratio := fmt.Sprintf("%.3f", c.Ratio)
		if !c.Benchmarked {
			ratio = "(1)"
		}
		fmt.Fprintf(tw, "%s\t%d\t%.6f\t%s\t%.6f\t%s\t%s\t\n", c.Category, c.Calls, c.RefTime, ratio, c.Predicted, opt(c.Actual, "%.6f"), opt(c.ErrorPct, "%+.1f"))
	}
	fmt.Fprintf(tw, "total (%s → %s)\t\t%.6f\t\t%.6f\t%s\t%s\t\n", p.Reference, p.Target, p.RefTotal, p.Predicted, opt(p.Actual, "%.6f"), opt(p.ErrorPct, "%+.1f"))
	if err := tw.Flush(); err != nil {
		return err
	}
	if p.Unbenchmarked > 0 {
		fmt.Fprintf(w, "%.1f%% of the reference I/O time is in categories not benchmarked (ratio 1)\n", 100*p.Unbenchmarked)
	}
	return nil
}
