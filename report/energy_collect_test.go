package report

import (
	"context"
	"testing"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/stages/energy"
)

func TestEnergyCollector(t *testing.T) {
	var c EnergyCollector
	if _, err := c.Report(nil); err == nil || err.Error() != "energy: the pipeline ended without a result" {
		t.Fatalf("no result: %v", err)
	}
	ctx := context.Background()
	c.Write(ctx, tracecast.Batch{Items: []tracecast.PowerSample{{Node: "a", Watts: 1}, {Node: "b", Watts: 2}, {Node: "a", Watts: 3}}})
	c.Write(ctx, tracecast.Batch{Items: []*energy.Result{{}}})
	c.Write(ctx, tracecast.Batch{Items: []tracecast.Entity{{}}})
	if c.Result == nil || len(c.Series["a"]) != 2 || len(c.Series["b"]) != 1 || c.Series["a"][1].Watts != 3 {
		t.Fatalf("%+v", c)
	}
	if r, err := c.Report(nil); err != nil || r == nil {
		t.Fatalf("%v", err)
	}
}
