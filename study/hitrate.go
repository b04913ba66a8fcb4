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
	if table {
		res := h.sw.Results()
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "window\tsamples\tcompared\thits\thit_rate\twindow_s\t\n")
		for _, r := range res {
			rate := "-" // nothing compared: no rate
			if hr := r.Rate(); hr != nil {
				rate = fmt.Sprintf("%.4f", *hr)
			}
			fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%s\t%.4g\t\n", r.Window, r.Samples, r.Compared, r.Hits, rate, h.windowS(r.Window))
		}
		return tw.Flush()
	}
	recs, _ := h.Records()
	var b []byte
	for _, rec := range recs {
		b = append(rec.AppendJSON(b), '\n')
	}
	_, err := w.Write(b)
	return err
}

// Records are the hit-rates of every window size as tracecast.hitrate/1
// records (HitRate NaN when nothing was compared). It is an error when the
// signal had no samples.
func (h *Hitrates) Records() ([]tracecast.HitRate, error) {
	if h.sw == nil {
		return nil, fmt.Errorf("%s: the signal has no samples", h.Trace)
	}
	var recs []tracecast.HitRate
	for _, r := range h.sw.Results() {
		rec := tracecast.HitRate{Trace: h.Trace, Class: h.class, Window: r.Window, Samples: r.Samples, Compared: r.Compared,
			Hits: r.Hits, HitRate: math.NaN(), Method: string(h.Method), Period: h.period, TimeUnit: h.unit, WindowS: h.windowS(r.Window), R: h.r}
		if rate := r.Rate(); rate != nil {
			rec.HitRate = *rate
		}
		recs = append(recs, rec)
	}
	return recs, nil
}

// windowS is the length of w samples in seconds.
func (h *Hitrates) windowS(w int) float64 { return float64(w) * h.period / tracecast.PerSecond(h.unit) }
