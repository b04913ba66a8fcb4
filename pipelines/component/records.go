package component

import (
	"context"
	"reflect"

	"github.com/tracecast/tracecast"
)

// CheckRecords validates a sink's `records:` option: "" (every type) or
// the plural of a record type (tracecast.LookupRecordType).
func CheckRecords(plural string) error {
	if plural == "" {
		return nil
	}
	_, err := tracecast.LookupRecordType(plural)
	return err
}

// FilterRecords makes a sink keep only the batches of one record type, so
// that one stage's several outputs (windows, predictions, verdicts, alerts)
// go to separate files. "" keeps everything.
func FilterRecords(s tracecast.Sink, plural string) tracecast.Sink {
	if plural == "" {
		return s
	}
	t, err := tracecast.LookupRecordType(plural)
	if err != nil {
		panic(err) // Validate checked it
	}
	return filterSink{Sink: s, want: t.Items}
}

// filterSink passes on only the batches of one record type.
type filterSink struct {
	tracecast.Sink
	want reflect.Type
}

// Accepts tells the runtime which batches this sink keeps.
func (f filterSink) Accepts(b tracecast.Batch) bool { return reflect.TypeOf(b.Items) == f.want }

func (f filterSink) Write(ctx context.Context, b tracecast.Batch) error {
	if !f.Accepts(b) {
		return nil
	}
	return f.Sink.Write(ctx, b)
}

// ForgetsItems passes on the wrapped sink's answer.
func (f filterSink) ForgetsItems() bool {
	fi, ok := f.Sink.(tracecast.ItemsForgetter)
	return ok && fi.ForgetsItems()
}

// DurableOnClose passes on the wrapped sink's answer.
func (f filterSink) DurableOnClose() bool {
	cd, ok := f.Sink.(tracecast.CloseDurable)
	return ok && cd.DurableOnClose()
}

// Abort passes on to the wrapped sink, which is closed if it cannot abort
// (tracecast.Aborter).
func (f filterSink) Abort() error {
	if a, ok := f.Sink.(tracecast.Aborter); ok {
		return a.Abort()
	}
	return f.Sink.Close(context.Background())
}

// LiveMetrics passes on the wrapped sink's (LiveMetricsReporter).
func (f filterSink) LiveMetrics(add func(Metric)) {
	if r, ok := f.Sink.(LiveMetricsReporter); ok {
		r.LiveMetrics(add)
	}
}

// Unready passes on the wrapped sink's (ReadinessReporter).
func (f filterSink) Unready() string {
	if r, ok := f.Sink.(ReadinessReporter); ok {
		return r.Unready()
	}
	return ""
}

// Flush passes on to the wrapped sink when it gathers batches
// (tracecast.Flusher).
func (f filterSink) Flush(ctx context.Context) error {
	if fl, ok := f.Sink.(tracecast.Flusher); ok {
		return fl.Flush(ctx)
	}
	return nil
}
