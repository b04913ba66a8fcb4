package report

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/parsers/paje"
)

// referencePage is the page the single-pass collector made of a trace.
func referencePage(t *testing.T, path string, o PageOptions) *Page {
	t.Helper()
	c, err := newRefCollector("auto")
	if err != nil {
		t.Fatal(err)
	}
	if err := readTrace(path, c); err != nil {
		t.Fatal(err)
	}
	p, err := c.page(o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// batchesOf reads a trace into batches of entities, each with a low
// watermark: the earliest state start of the later batches, per state type
// (TypeWatermarks) as the paje parser gives them.
func batchesOf(t *testing.T, path string) []tracecast.Batch {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var bs []tracecast.Batch
	if _, err := paje.Read(f, paje.DefaultOptions(), func(es []tracecast.Entity) error {
		bs = append(bs, tracecast.Batch{Items: slices.Clone(es)})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	later := map[string]float64{}
	for i := len(bs) - 1; i >= 0; i-- {
		tw := map[string]float64{}
		w := math.Inf(1)
		for typ, s := range later {
			tw[typ] = s
			w = math.Min(w, s)
		}
		bs[i].TypeWatermarks, bs[i].Watermark = tw, w
		for _, e := range bs[i].Items.([]tracecast.Entity) {
			if e.Nature == tracecast.NatureState {
				if s, ok := later[e.Type]; !ok || e.Start < s {
					later[e.Type] = e.Start
				}
			}
		}
	}
	return bs
}

// samePage compares two pages' data: the same, but the scores of the
// skill table within tol (relative).
func samePage(a, b *Page, tol float64) error {
	var x, y any
	for _, p := range []struct {
		pg  *Page
		out *any
	}{{a, &x}, {b, &y}} {
		data, err := json.Marshal(p.pg)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(data, p.out); err != nil {
			return err
		}
		// The spell forecasts over the Gantt chart came after the
		// reference collector (TestSpellsOverGantt checks them).
		delete((*p.out).(map[string]any), "spells")
	}
	return sameJSON("", x, y, tol)
}

func sameJSON(path string, x, y any, tol float64) error {
	switch a := x.(type) {
	case map[string]any:
		b, ok := y.(map[string]any)
		if !ok || len(a) != len(b) {
			return fmt.Errorf("%s: %v keys, want %v", path, keys(a), y)
		}
		for k := range a {
			if err := sameJSON(path+"."+k, a[k], b[k], tol); err != nil {
				return err
			}
		}
	case []any:
		b, ok := y.([]any)
		if !ok || len(a) != len(b) {
			return fmt.Errorf("%s: %d elements, want %v", path, len(a), lenOf(y))
		}
		for i := range a {
			if err := sameJSON(fmt.Sprintf("%s[%d]", path, i), a[i], b[i], tol); err != nil {
				return err
			}
		}
	case float64:
		b, ok := y.(float64)
		if !strings.HasPrefix(path, ".skill") {
			tol = 0 // only the scores may differ (their sums' order)
		}
		if !ok || math.Abs(a-b) > tol*math.Max(1, math.Abs(b)) {
			return fmt.Errorf("%s: %v, want %v", path, x, y)
		}
	default:
		if fmt.Sprint(x) != fmt.Sprint(y) {
			return fmt.Errorf("%s: %v, want %v", path, x, y)
		}
	}
	return nil
}

func keys(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func lenOf(y any) int {
	if b, ok := y.([]any); ok {
		return len(b)
	}
	return -1
}

// TestPageMatchesReference: the two-pass collector makes the page the
// single-pass one made (reference_test.go), on StarPU and SMPI traces,
// exact and aggregated, with the default and given horizons — reading
// without watermarks (everything drawn at the end) and with them (drawn
// as the states become final). The skill table comes from the engine's
// scores rather than Verify's: equal within 1e-9.
func TestPageMatchesReference(t *testing.T) {
	for _, tc := range []struct {
		name, path string
		o          PageOptions
	}{
		{"starpu", demoTrace, PageOptions{}},
		{"starpu-aggregated", demoTrace, PageOptions{MaxSegments: 1000, GanttBins: 500, MaxPoints: 700}},
		{"starpu-horizons", demoTrace, PageOptions{Horizons: []float64{0.01, 1}}},
		{"jacobi", "../testdata/smpi/jacobi-8.trace.gz", PageOptions{}},
		{"ring", "../testdata/smpi/ring-4.trace", PageOptions{MaxSegments: 50, GanttBins: 37}},
		{"farm", "../testdata/smpi/farm-16.trace", PageOptions{}},
		{"dynfarm", "../testdata/smpi/dynfarm-16.trace.gz", PageOptions{MaxSegments: 2000}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.o.Title = tc.path
			want := referencePage(t, tc.path, tc.o)
			got, err := pageOfFile(tc.path, "auto", tc.o)
			if err != nil {
				t.Fatal(err)
			}
			if err := samePage(got, want, 1e-9); err != nil {
				t.Errorf("without watermarks: %v", err)
			}
			got, _, err = pageOfBatches("auto", tc.o, batchesOf(t, tc.path)...)
			if err != nil {
				t.Fatal(err)
			}
			if err := samePage(got, want, 1e-9); err != nil {
				t.Errorf("with watermarks: %v", err)
			}
		})
	}
}

// TestChartDecimation: past its bound the chart keeps every other
// forecast, then every fourth..., each with its own outcome (that of the
// same forecast in a chart never decimated).
func TestChartDecimation(t *testing.T) {
	collector := func(max int) *PageCollector {
		s, err := NewPageSurvey("auto")
		if err != nil {
			t.Fatal(err)
		}
		if err := readTrace(demoTrace, s); err != nil {
			t.Fatal(err)
		}
		c, err := s.Collector(PageOptions{Horizons: []float64{0.5, 1}})
		if err != nil {
			t.Fatal(err)
		}
		c.maxChart = max
		if err := readTrace(demoTrace, c); err != nil {
			t.Fatal(err)
		}
		if err := c.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		return c
	}
	all, few := collector(1<<20), collector(64)
	if all.every != 1 || few.every < 2 || len(few.chart) >= 64 || len(few.chart) < 32 {
		t.Fatalf("%d points kept of %d (every %d)", len(few.chart), len(all.chart), few.every)
	}
	for i, p := range few.chart {
		q := all.chart[int64(i)*few.every]
		if p.t != q.t || p.p != q.p || fmt.Sprint(p.obs) != fmt.Sprint(q.obs) {
			t.Fatalf("point %d: %+v, want %+v", i, p, q)
		}
	}
}
