package report

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/tracecast/tracecast"
)

// TestPageBoundsValues: a worker running n distinct codelets one after the
// other (a SetState each) while another sleeps. The Gantt names the first
// MaxGanttValues values and shows the others as "(other compute states)";
// the collector keeps one span per run of one value (2M codelets made a
// 55 MB page and took 1 GB).
func TestPageBoundsValues(t *testing.T) {
	n := 3 * MaxGanttValues
	st := func(cont string, s, e float64, v string) tracecast.Entity {
		return tracecast.Entity{Nature: tracecast.NatureState, Container: cont, Type: "Worker State", Start: s, End: e, Value: v}
	}
	var es []tracecast.Entity
	for i := range n {
		es = append(es, st("w0", float64(i), float64(i+1), fmt.Sprintf("codelet_%d", i)))
	}
	es = append(es, st("w0", float64(n), float64(n+1), "FetchingInput"), st("w1", 0, float64(n+1), "Sleeping"))
	p, c, err := pageOfBatches("starpu", PageOptions{Title: "values"}, tracecast.Batch{Items: es, Watermark: math.NaN()})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.names) > MaxGanttValues+3 {
		t.Fatalf("%d state values kept, want at most %d and one per class", len(c.names), MaxGanttValues)
	}
	// codelet_0 .. codelet_999, the other codelets as one span, and the
	// FetchingInput; w1's Sleeping.
	if c.nStates != MaxGanttValues+3 {
		t.Fatalf("%d states counted, want %d", c.nStates, MaxGanttValues+3)
	}
	if got := len(c.rows["w0"].segs) / 3; got != MaxGanttValues+2 {
		t.Fatalf("%d segments for w0, want %d", got, MaxGanttValues+2)
	}
	g := p.Gantt
	i := slices.Index(g.Values, "(other compute states)")
	if i < 0 || g.Classes[i] != "compute" {
		t.Fatalf("values %v...: no (other compute states) of class compute", g.Values[len(g.Values)-3:])
	}
	if j := slices.Index(g.Values, "FetchingInput"); j >= 0 {
		t.Fatalf("FetchingInput has its own value past the limit")
	}
	if j := slices.Index(g.Values, "(other comm states)"); j < 0 || g.Classes[j] != "comm" {
		t.Fatalf("no (other comm states) of class comm: %v", g.Values[len(g.Values)-3:])
	}
}
