package report

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/pipelines"
	"github.com/tracecast/tracecast/stages/energy"
	"github.com/tracecast/tracecast/stages/signal"
)

func inputs(files ...string) EnergyInputs {
	return EnergyInputs{Power: files, Stage: energy.DefaultStageConfig()}
}

// AddTo wires one power source per stream into the energy stage and the
// sink, and refuses what would make a broken pipeline.
func TestEnergyInputsAddTo(t *testing.T) {
	base := func() pipelines.Spec {
		return pipelines.Spec{Sources: []pipelines.Node{{ID: "trace", Type: "file"}},
			Sinks: []pipelines.Node{{ID: "page", Type: "page", Inputs: []string{"trace"}}}}
	}
	spec := base()
	in := inputs("a.csv", "b.json")
	in.Stage.Offset, in.Stage.Map = 12, map[string]string{"CPU1": "n1"}
	if err := in.AddTo(&spec, "trace", "energy-page"); err != nil {
		t.Fatal(err)
	}
	if len(spec.Sources) != 3 || spec.Sources[1].ID != "power" || spec.Sources[2].ID != "power-2" || spec.Sources[2].Options["path"] != "b.json" {
		t.Fatalf("sources %+v", spec.Sources)
	}
	st := spec.Stages[0]
	if st.Type != "energy" || strings.Join(st.Inputs, ",") != "trace,power,power-2" || st.Options["offset"] != 12.0 || st.Options["result"] != true {
		t.Fatalf("stage %+v", st)
	}
	if sk := spec.Sinks[1]; sk.Type != "energy-page" || strings.Join(sk.Inputs, ",") != "energy,power,power-2" {
		t.Fatalf("sink %+v", sk)
	}
	if _, err := spec.Config(); err != nil {
		t.Fatalf("the spec does not make a pipeline: %v", err)
	}

	for _, tc := range []struct {
		name, trace, sink, want string
		edit                    func(*EnergyInputs)
	}{
		{"no stream", "trace", "e", "no power stream", func(in *EnergyInputs) { in.Power = nil }},
		{"bad format", "trace", "e", "format", func(in *EnergyInputs) { in.Format = "xml" }},
		{"bad stage option", "trace", "e", "max_gap", func(in *EnergyInputs) { in.Stage.MaxGap = -1 }},
		{"bad rules", "trace", "e", "rules", func(in *EnergyInputs) { in.Stage.Rules = "paje" }},
		{"negative limit", "trace", "e", "negative", func(in *EnergyInputs) { in.MaxPowerPoints = -1 }},
		{"no trace source", "nope", "e", `no source "nope"`, func(*EnergyInputs) {}},
		{"id taken", "trace", "page", `already has a component "page"`, func(*EnergyInputs) {}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := base()
			in := inputs("a.csv")
			tc.edit(&in)
			err := in.AddTo(&spec, tc.trace, tc.sink)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
}

// The kept samples stay within MaxPowerPoints however long the stream, and
// merging keeps each node's mean, minimum and maximum and its whole
// stream's energy.
func TestEnergyCollectorBounded(t *testing.T) {
	in := inputs("p")
	in.MaxPowerPoints = 100
	c := NewEnergyPageCollector(in)
	ctx := context.Background()
	var sum [2]float64
	const n = 10_000
	for i := range n {
		batch := make([]tracecast.PowerSample, 0, 2)
		for k, node := range []string{"a", "b"} {
			w := 100 + float64(k)*50 + 10*math.Sin(float64(i)/50)
			sum[k] += w
			batch = append(batch, tracecast.PowerSample{T: float64(i) * 0.001, Node: node, Watts: w})
		}
		if err := c.Write(ctx, tracecast.Batch{Stream: "p", Items: batch}); err != nil {
			t.Fatal(err)
		}
		if c.kept > in.MaxPowerPoints {
			t.Fatalf("%d samples kept, limit %d", c.kept, in.MaxPowerPoints)
		}
	}
	for k, node := range []string{"a", "b"} {
		pn := c.nodes[node]
		var s float64
		var cnt int64
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, b := range pn.b {
			s += b.sum
			cnt += b.n
			lo, hi = math.Min(lo, b.lo), math.Max(hi, b.hi)
		}
		if cnt != n || math.Abs(s-sum[k]) > 1e-6*sum[k] || lo < 90+float64(k)*50-1e-9 || hi > 110+float64(k)*50+1e-9 || pn.first != 0 || pn.last != 9.999 {
			t.Fatalf("node %s: %d samples, sum %g (want %g), %g–%g W, %g–%g s", node, cnt, s, sum[k], lo, hi, pn.first, pn.last)
		}
	}
	// The chart of one node over [0, 10] s: its points average the samples.
	pc := c.chart([]string{"a"}, 0, 10, 20)
	if len(pc.Series) != 1 || len(pc.Series[0].T) == 0 || pc.Min < 90 || pc.Max > 110 {
		t.Fatalf("chart %+v", pc)
	}
	for i, m := range pc.Series[0].Mean {
		if m < pc.Series[0].Lo[i] || m > pc.Series[0].Hi[i] {
			t.Fatalf("point %d: mean %g outside %g–%g", i, m, pc.Series[0].Lo[i], pc.Series[0].Hi[i])
		}
	}

	// Past MaxNodes, samples are counted and reported, not kept.
	in.MaxNodes = 2
	c = NewEnergyPageCollector(in)
	for _, node := range []string{"a", "b", "c", "c"} {
		c.add(tracecast.PowerSample{T: 1, Node: node, Watts: 1})
	}
	if len(c.nodes) != 2 || c.dropped != 2 {
		t.Fatalf("%d nodes kept, %d samples dropped", len(c.nodes), c.dropped)
	}
}

// oneNodeResult is an energy result of node n0 (2 workers computing over
// [0, 10] s) joined with samples of constant watts at times ts (power time,
// offset off), as the energy stage makes it.
func oneNodeResult(t *testing.T, c *EnergyPageCollector, node string, ts []float64, watts, off float64) {
	t.Helper()
	var busy [energy.NumClasses]int32
	busy[signal.Compute] = 2
	tls := map[string]*energy.Timeline{"n0": {Node: "n0", R: 2, T0: 0, End: 10, Steps: []signal.Step{{T: 0, Count: busy}}}}
	j := energy.NewJoiner(tls, energy.Options{MaxGap: float64(c.in.Stage.MaxGap), Offset: off})
	var ss []tracecast.PowerSample
	for _, x := range ts {
		ss = append(ss, tracecast.PowerSample{T: x, Node: node, Watts: watts})
	}
	j.Add(ss)
	ctx := context.Background()
	for _, b := range []tracecast.Batch{{Stream: "p.csv", Items: ss}, {Items: []*energy.Result{j.Finish()}}} {
		if err := c.Write(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
}

func seq(a, b, step float64) []float64 {
	var out []float64
	for x := a; x <= b+1e-9; x += step {
		out = append(out, x)
	}
	return out
}

// The section says why numbers are missing instead of showing 0 J: no
// sample of the node, none within the run (with the epoch hint), gaps,
// partial cover, samples of unknown nodes, a stream without samples.
func TestEnergySectionWarnings(t *testing.T) {
	for _, tc := range []struct {
		name   string
		files  []string
		node   string
		ts     []float64
		off    float64
		maxGap float64
		noData bool
		want   []string
	}{
		{"covered", []string{"p.csv"}, "n0", seq(0, 10, 0.5), 0, 5, false, nil},
		{"other node", []string{"p.csv"}, "taurus-1", seq(0, 10, 0.5), 0, 5, true,
			[]string{"node n0: no power sample of this node (the power streams have nodes taurus-1)", "21 power samples of nodes with no workers in the trace (taurus-1)"}},
		{"epoch without offset", []string{"p.csv"}, "n0", seq(1.7e9, 1.7e9+10, 0.5), 0, 5, true,
			[]string{"no power sample falls within its run", "look like Unix epoch seconds: give --offset"}},
		{"wrong offset", []string{"p.csv"}, "n0", seq(100, 110, 0.5), 20, 5, true,
			[]string{"its 21 samples cover trace time 80–90 s", "check --offset"}},
		{"gaps", []string{"p.csv"}, "n0", append(seq(0, 3, 0.5), seq(6, 10, 0.5)...), 0, 1, false,
			[]string{"node n0: 1 gap in the power samples", "3.0000 s of its run (30.0%) not integrated, first 3.0000–6.0000 s"}},
		{"partial", []string{"p.csv"}, "n0", seq(0, 5, 0.5), 0, 5, false, []string{"cover 5.0000 s of its 10.0000 s run (50.0%)"}},
		{"empty stream", []string{"p.csv", "q.csv"}, "n0", seq(0, 10, 0.5), 0, 5, false, []string{"q.csv: no power sample"}},
		{"no stream gave a sample", []string{"p.csv"}, "n0", nil, 0, 5, true, []string{"the power streams gave no sample: p.csv", "node n0: no power sample of this node (the power streams have no node at all)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := inputs(tc.files...)
			in.Stage.MaxGap, in.Stage.Offset = tracecast.Seconds(tc.maxGap), tracecast.Seconds(tc.off)
			c := NewEnergyPageCollector(in)
			oneNodeResult(t, c, tc.node, tc.ts, 100, tc.off)
			s, err := c.section(0, 10, 50)
			if err != nil {
				t.Fatal(err)
			}
			all := strings.Join(s.Warnings, "\n")
			if len(tc.want) == 0 && len(s.Warnings) > 0 {
				t.Fatalf("warnings: %s", all)
			}
			for _, w := range tc.want {
				if !strings.Contains(all, w) {
					t.Errorf("no warning saying %q in:\n%s", w, all)
				}
			}
			if s.Nodes[0].NoData != tc.noData {
				t.Errorf("no data %v, want %v", s.Nodes[0].NoData, tc.noData)
			}
			if !tc.noData && s.Nodes[0].Classes[signal.Compute].EnergyJ <= 0 {
				t.Errorf("covered node with no compute energy: %+v", s.Nodes[0])
			}
		})
	}
	// Without the stage's result the page cannot say anything: an error.
	if _, err := NewEnergyPageCollector(inputs("p")).section(0, 1, 10); err == nil {
		t.Fatal("no error without the energy stage's result")
	}
}

// The section's numbers are the energy stage's: per class, the node's
// total, and the whole stream beyond the run.
func TestEnergySectionNumbers(t *testing.T) {
	in := inputs("p.csv")
	c := NewEnergyPageCollector(in)
	// 100 W from −5 s to 15 s: 1000 J within the 10 s run, 2000 J in all.
	oneNodeResult(t, c, "n0", seq(-5, 15, 0.5), 100, 0)
	s, err := c.section(0, 10, 50)
	if err != nil {
		t.Fatal(err)
	}
	n := s.Nodes[0]
	if n.Total != "1000.000" || n.Classes[signal.Compute].Energy != "1000.000" || n.Classes[signal.Compute].Share != "100.0%" ||
		n.Classes[signal.Compute].Occupancy != "20.0000" || n.Mean != "100.00 W" || n.Workers != 2 {
		t.Fatalf("node %+v", n)
	}
	if math.Abs(s.MeasuredJ-1000) > 1e-9 || math.Abs(s.AttributedJ-1000) > 1e-9 || math.Abs(s.StreamJ-2000) > 1e-9 {
		t.Fatalf("measured %g, attributed %g, stream %g", s.MeasuredJ, s.AttributedJ, s.StreamJ)
	}
	if s.All != nil {
		t.Fatal("an all-nodes table for one node")
	}
	// Only the points within the run are drawn, at the samples' times.
	ps := s.Power.Series[0]
	if len(ps.T) != 21 || ps.T[0] != 0 || ps.T[20] != 10 {
		t.Fatalf("points at %v", ps.T)
	}
}

// Past maxPowerLines nodes the chart draws their sum, each node
// interpolated between its points.
func TestPowerChartSum(t *testing.T) {
	c := NewEnergyPageCollector(inputs("p"))
	var nodes []string
	for i := range maxPowerLines + 2 {
		node := string(rune('a' + i))
		nodes = append(nodes, node)
		for _, x := range seq(0, 10, 0.1) {
			c.add(tracecast.PowerSample{T: x, Node: node, Watts: 10})
		}
	}
	pc := c.chart(nodes, 0, 10, 40)
	if !pc.Summed || len(pc.Series) != 1 || len(pc.Series[0].T) != 40 {
		t.Fatalf("chart %+v", pc)
	}
	for _, v := range pc.Series[0].Mean {
		if math.Abs(v-float64(10*len(nodes))) > 1e-9 {
			t.Fatalf("sum %g, want %d", v, 10*len(nodes))
		}
	}
}
