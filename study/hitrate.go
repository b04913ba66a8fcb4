package study

import (
	"context"
	"fmt"
	"io"
	"math"
	"strconv"
	"text/tabwriter"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/stats/ks"
	"github.com/tracecast/tracecast/stats/surface"
)

// Hitrates is a pipeline sink on a signal stage's samples (tracecast
// hitrate): the KS hit-rate of consecutive windows for every window size,
// in one pass, with the signal never held (memory O(R × window sizes)),
// and the trace's classification. The first batch's metadata gives R, the
// period, the class and the time unit.
type Hitrates struct {
	Trace   string // names the trace in the records
	Windows []int
	Method  ks.Method
	Alpha   float64

	class, unit string
	period      float64
	r           int
	sw          *ks.Sweeper
	classifier  surface.Classifier
}

// Write takes a batch of samples; other records are ignored.
func (h *Hitrates) Write(_ context.Context, b tracecast.Batch) error {
	ss, ok := b.Items.([]tracecast.Sample)
	if !ok {
		return nil
	}
	if h.sw == nil {
		h.r, _ = strconv.Atoi(b.Meta["r"])
		h.period, _ = strconv.ParseFloat(b.Meta["period"], 64)
		h.unit, h.class = b.Meta["time_unit"], b.Meta["class"]
		h.sw = ks.NewSweeper(h.r, h.Windows, h.Method, h.Alpha)
		h.classifier = surface.Classifier{R: h.r}
	}
	for _, x := range ss {
		h.sw.Add(int(x.X))
		h.classifier.Add(int(x.X))
	}
	return nil
}

// Close does nothing.
func (h *Hitrates) Close(context.Context) error { return nil }

// Classification is the trace's state (uniform idle, patch, uniform
// computation) when the class counted is idle; ok is false otherwise, or
// when there were no samples.
func (h *Hitrates) Classification() (c surface.Classification, ok bool) {
	if h.sw == nil || h.class != "idle" {
		return c, false
	}
	return h.classifier.Result(), true
}

// WriteResults writes the hit-rate of every window size: a table when
// table is set (for a terminal), else one tracecast.hitrate/1 record per
// size, as JSON lines. It is an error when the signal had no samples.
func (h *Hitrates) WriteResults(w io.Writer, table bool) error {
	if h.sw == nil {
		return fmt.Errorf("%s: the signal has no samples", h.Trace)
	}
	res, method := h.sw.Results(), string(h.Method)
	windowS := func(r ks.SweepResult) float64 { return float64(r.Window) * h.period / tracecast.PerSecond(h.unit) }
	if table {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "window\tsamples\tcompared\thits\thit_rate\twindow_s\t\n")
		for _, r := range res {
			rate := "-" // nothing compared: no rate
			if h := r.Rate(); h != nil {
				rate = fmt.Sprintf("%.4f", *h)
			}
			fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%s\t%.4g\t\n", r.Window, r.Samples, r.Compared, r.Hits, rate, windowS(r))
		}
		return tw.Flush()
	}
	var b []byte
	for _, r := range res {
		rec := tracecast.HitRate{Trace: h.Trace, Class: h.class, Window: r.Window, Samples: r.Samples, Compared: r.Compared,
			Hits: r.Hits, HitRate: math.NaN(), Method: method, Period: h.period, TimeUnit: h.unit, WindowS: windowS(r), R: h.r}
		if rate := r.Rate(); rate != nil {
			rec.HitRate = *rate
		}
		b = append(rec.AppendJSON(b), '\n')
	}
	_, err := w.Write(b)
	return err
}
