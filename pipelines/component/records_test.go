package component

import (
	"context"
	"testing"

	"github.com/tracecast/tracecast"
)

// ender records how a sink was ended.
type ender struct{ closed, aborted int }

func (e *ender) Write(context.Context, tracecast.Batch) error { return nil }
func (e *ender) Close(context.Context) error                  { e.closed++; return nil }

type abortingEnder struct{ ender }

func (a *abortingEnder) Abort() error { a.aborted++; return nil }

// TestFilterSinkAbort: a filtered sink passes Abort on to a sink that can
// abort, and closes one that cannot.
func TestFilterSinkAbort(t *testing.T) {
	a := &abortingEnder{}
	if err := FilterRecords(a, "entities").(tracecast.Aborter).Abort(); err != nil || a.aborted != 1 || a.closed != 0 {
		t.Errorf("aborting sink: err %v, aborted %d, closed %d; want aborted once", err, a.aborted, a.closed)
	}
	c := &ender{}
	if err := FilterRecords(c, "entities").(tracecast.Aborter).Abort(); err != nil || c.closed != 1 {
		t.Errorf("other sink: err %v, closed %d; want closed once", err, c.closed)
	}
}
