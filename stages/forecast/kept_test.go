package forecast

import (
	"context"
	"testing"

	"github.com/tracecast/tracecast"
)

func TestKept(t *testing.T) {
	var k Kept
	ctx := context.Background()
	k.Write(ctx, tracecast.Batch{Items: []tracecast.Forecast{{ID: "a"}, {ID: "b"}}})
	k.Write(ctx, tracecast.Batch{Items: []tracecast.Episode{{Kind: "regime-change", State: "open"}, {Kind: "regime-change", State: "closed"},
		{Kind: "idle-opportunity", State: "open"}, {Kind: "regime-change", State: "open"}}})
	k.Write(ctx, tracecast.Batch{Items: []tracecast.Entity{{}}})
	if len(k.Forecasts) != 2 || k.Opened["regime-change"] != 2 || k.Opened["idle-opportunity"] != 1 {
		t.Fatalf("%+v", k)
	}
}
