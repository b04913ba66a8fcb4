package report

import (
	"context"
	"fmt"
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

// The power samples kept for the plots are bounded, all nodes together
// (1 000 000 by default: 48 MB): past the bound the series are thinned
// uniformly (every 2nd sample, then every 4th, ...), so a long power
// stream costs a bounded memory and still spans the whole run. Before, the
// collector kept every sample of every node.
func TestEnergyCollectorBoundsSeries(t *testing.T) {
	c := &EnergyCollector{}
	const nodes, per = 2, 1_250_000 // 2.5 M samples
	batch := make([]tracecast.PowerSample, 0, 10000)
	for i := 0; i < per; i++ {
		for n := 0; n < nodes; n++ {
			batch = append(batch, tracecast.PowerSample{T: float64(i), Node: fmt.Sprintf("n%d", n), Watts: 100})
		}
		if len(batch) == cap(batch) {
			if err := c.Write(context.Background(), tracecast.Batch{Items: batch}); err != nil {
				t.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	held := 0
	for node, s := range c.Series {
		held += len(s)
		if len(s) < 100_000 || s[0].T != 0 || s[len(s)-1].T < per*0.99 {
			t.Errorf("%s: %d samples from %v to %v: want the whole run, thinned", node, len(s), s[0].T, s[len(s)-1].T)
		}
		step := s[1].T - s[0].T
		for i := 1; i < len(s); i++ {
			if s[i].T-s[i-1].T != step {
				t.Fatalf("%s: uneven thinning at %d: %v then %v", node, i, s[i-1].T, s[i].T)
			}
		}
	}
	if held > 1_000_000 {
		t.Fatalf("%d power samples held for the plots: want at most 1000000", held)
	}
}
