package iotime

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteTable prints the breakdown as a table for people: one row per
// category (per process and category with perProcess), then the total.
func (s Summary) WriteTable(w io.Writer, perProcess bool) error {
	rows := s.Categories
	if perProcess {
		rows = s.Processes
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "pid\tcategory\tcalls\tbytes\ttime_s\tmean_s\tmean_size\tmean_gap_s\t\n")
	for _, r := range append(rows[:len(rows):len(rows)], s.Total) {
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%.6f\t%.3g\t%.0f\t%.3g\t\n", r.PID, r.Key, r.Calls, r.Bytes, r.Time, r.Mean, r.MeanSize, r.MeanGap)
	}
	return tw.Flush()
}
