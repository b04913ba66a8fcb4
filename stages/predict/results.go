package predict

import (
	"bufio"
	"context"
	"io"

	"github.com/tracecast/tracecast"
)

// Results collects what a predict stage emits (a pipeline sink for a
// command that prints the records at the end): windows, predictions,
// verdicts and alerts, and the stage's metadata (time unit, period, rules).
type Results struct {
	Windows     []tracecast.Window
	Predictions []tracecast.Prediction
	Verdicts    []tracecast.Verdict
	Alerts      []tracecast.Alert
	Meta        map[string]string
}

// Write keeps a batch's records.
func (r *Results) Write(_ context.Context, b tracecast.Batch) error {
	switch items := b.Items.(type) {
	case []tracecast.Window:
		r.Windows = append(r.Windows, items...)
	case []tracecast.Prediction:
		r.Predictions = append(r.Predictions, items...)
	case []tracecast.Verdict:
		r.Verdicts = append(r.Verdicts, items...)
	case []tracecast.Alert:
		r.Alerts = append(r.Alerts, items...)
	}
	if r.Meta == nil {
		r.Meta = b.Meta
	}
	return nil
}

// Close does nothing.
func (r *Results) Close(context.Context) error { return nil }

// WriteJSONL writes the predictions, verdicts and alerts (and the windows
// first, when windows is set) as JSON lines, as the jsonl sink does:
// "record" first, queries not HTML-escaped.
func (r *Results) WriteJSONL(w io.Writer, windows bool) error {
	bw := bufio.NewWriter(w)
	var line []byte
	put := func(rec interface{ AppendJSON([]byte) []byte }) {
		line = append(rec.AppendJSON(line[:0]), '\n')
		bw.Write(line)
	}
	if windows {
		for _, x := range r.Windows {
			put(x)
		}
	}
	for _, x := range r.Predictions {
		put(x)
	}
	for _, x := range r.Verdicts {
		put(x)
	}
	for _, x := range r.Alerts {
		put(x)
	}
	return bw.Flush()
}
