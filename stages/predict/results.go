package predict

import (
	"bufio"
	"context"
	"encoding/json"
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
// first, when windows is set) as JSON lines, each object with a "record"
// field naming its kind and its keys in sorted order.
func (r *Results) WriteJSONL(w io.Writer, windows bool) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false) // queries hold >=
	var err error
	put := func(kind string, v any) {
		if err != nil {
			return
		}
		var b []byte
		if b, err = json.Marshal(v); err != nil {
			return
		}
		m := map[string]any{}
		if err = json.Unmarshal(b, &m); err != nil {
			return
		}
		m["record"] = kind
		err = enc.Encode(m)
	}
	if windows {
		for _, x := range r.Windows {
			put("window", x)
		}
	}
	for _, x := range r.Predictions {
		put("prediction", x)
	}
	for _, x := range r.Verdicts {
		put("verdict", x)
	}
	for _, x := range r.Alerts {
		put("alert", x)
	}
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	return err
}
