package report

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/forecast"
	"github.com/tracecast/tracecast/stages/signal"
)

// The single-pass collector the report had before it read its trace twice
// (kept as the reference its page must equal: TestPageMatchesReference):
// it kept every selected state and the whole step function, and built the
// page from them at the end.

// refCollector is a sink that keeps what the HTML report of one trace
// needs: the states of the selected containers (StarPU workers or SMPI
// ranks) and the counts of the trace's entities. It keeps 24 bytes per
// selected state: use it offline.
type refCollector struct {
	rules    []*signal.Rules
	builders []*signal.Builder
	spans    map[string][]pageSpan // by container, for every rule set
	values   map[string]int        // state value → index
	names    []string
	folded   map[int]signal.Class // the "(other CLASS states)" values (MaxGanttValues)
	counts   map[tracecast.Nature]int
	start    float64
	end      float64
}

// newRefCollector returns a collector for rules auto (StarPU workers when
// the trace has their states, else SMPI ranks), starpu or smpi.
func newRefCollector(rules string) (*refCollector, error) {
	names := []string{rules}
	if rules == "auto" {
		names = []string{"starpu", "smpi"}
	}
	c := &refCollector{spans: map[string][]pageSpan{}, values: map[string]int{}, counts: map[tracecast.Nature]int{},
		start: math.Inf(1), end: math.Inf(-1)}
	for _, n := range names {
		mk, ok := signal.Presets[n]
		if !ok {
			return nil, fmt.Errorf("rules %q: want auto, starpu or smpi", rules)
		}
		r := mk()
		if err := r.Compile(); err != nil {
			return nil, err
		}
		c.rules = append(c.rules, r)
		c.builders = append(c.builders, signal.NewBuilder(r))
	}
	return c, nil
}

// Write takes a batch of entities; other records pass by.
func (c *refCollector) Write(_ context.Context, b tracecast.Batch) error {
	es, ok := b.Items.([]tracecast.Entity)
	if !ok {
		return nil
	}
	for _, bl := range c.builders {
		bl.Add(es)
	}
	for i := range es {
		e := &es[i]
		c.counts[e.Nature]++
		if e.Nature != tracecast.NatureContainer {
			c.start, c.end = math.Min(c.start, e.Start), math.Max(c.end, e.End)
		}
		if e.Nature != tracecast.NatureState {
			continue
		}
		for ri, r := range c.rules {
			if e.Type != r.StateType {
				continue
			}
			v, ok := c.values[e.Value]
			if !ok {
				v = c.refValue(e.Value, r)
			}
			sp := pageSpan{e.Start, e.End, int32(v), int16(e.Imbrication), int16(ri)}
			ss := c.spans[e.Container]
			if n := len(ss); n > 0 && ss[n-1].extends(sp) {
				ss[n-1].end = sp.end
				continue
			}
			c.spans[e.Container] = append(ss, sp)
		}
	}
	return nil
}

// value gives a new state value its index, or the index of its class's
// "(other CLASS states)" beyond MaxGanttValues.
func (c *refCollector) refValue(name string, r *signal.Rules) int {
	if len(c.names) >= MaxGanttValues {
		cl := r.Classify(name)
		name = "(other " + cl.String() + " states)"
		if v, ok := c.values[name]; ok {
			return v
		}
		if c.folded == nil {
			c.folded = map[int]signal.Class{}
		}
		c.folded[len(c.names)] = cl
	}
	v := len(c.names)
	c.values[name] = v
	c.names = append(c.names, name)
	return v
}

// Page builds the report from what was collected.
func (c *refCollector) page(o PageOptions) (*Page, error) {
	if o.MaxSegments == 0 {
		o.MaxSegments = 60_000
	}
	if o.GanttBins == 0 {
		o.GanttBins = 1500
	}
	if o.MaxPoints == 0 {
		o.MaxPoints = 3000
	}
	ri, sig, err := c.refSignal()
	if err != nil {
		return nil, err
	}
	rules := c.rules[ri]
	unit := o.Unit
	if unit == "" {
		unit = map[bool]string{true: "ms", false: "s"}[rules.Name == "starpu"]
	}
	perSec := tracecast.PerSecond(unit)
	t0, t1 := sig.T0()/perSec, sig.End/perSec
	p := &Page{Title: o.Title}
	p.Gantt = c.refGantt(ri, rules, sig, t0, t1, perSec, o)
	p.Occ = occupancyOf(sig, perSec, o.MaxPoints)
	if err := p.refForecasts(sig, perSec, o); err != nil {
		return nil, err
	}
	nStates := 0
	for _, ss := range c.spans {
		for _, s := range ss {
			if int(s.rules) == ri {
				nStates++
			}
		}
	}
	p.Summary = []SummaryItem{
		{"trace", o.Title},
		{"rules", rules.Name + ": " + rules.Describe()},
		{"selected containers", fmt.Sprint(sig.R)},
		{"their states", fmt.Sprint(nStates)},
		{"run", fmt.Sprintf("%.6g s to %.6g s (%.4g s)", t0, t1, t1-t0)},
		{"entities", fmt.Sprintf("%d containers, %d states, %d variables, %d events, %d links", c.counts[tracecast.NatureContainer],
			c.counts[tracecast.NatureState], c.counts[tracecast.NatureVariable], c.counts[tracecast.NatureEvent], c.counts[tracecast.NatureLink])},
	}
	for cl := signal.Class(0); cl < signal.NumClasses; cl++ {
		v := fmt.Sprintf("%.1f%% of the containers' time", 100*classShare(sig, cl))
		if !(sig.End > sig.T0()) { // no time to share (0/0)
			v = "- (the run lasts 0 s)"
		}
		p.Summary = append(p.Summary, SummaryItem{cl.String() + " share", v})
	}
	if o.Energy != nil {
		if p.Energy, err = o.Energy.section(t0, t1, o.MaxPoints); err != nil {
			return nil, err
		}
		v := fmt.Sprintf("%.3f J measured over the run", p.Energy.MeasuredJ)
		if !slices.ContainsFunc(p.Energy.Nodes, func(n energyNode) bool { return !n.NoData }) {
			v = "unknown: no power sample within the run"
		}
		if len(p.Energy.Warnings) > 0 {
			v += fmt.Sprintf(" (%s: see Energy by state)", plural(len(p.Energy.Warnings), "warning"))
		}
		p.Summary = append(p.Summary, SummaryItem{"energy", v})
	}
	return p, nil
}

// signal returns the first rule set that selects states, and its signal.
func (c *refCollector) refSignal() (int, *signal.Signal, error) {
	var first error
	for i, b := range c.builders {
		sig, err := b.Build()
		if err == nil {
			return i, sig, nil
		}
		if first == nil {
			first = err
		}
	}
	return 0, nil, signal.NothingToCount(c.rules, first)
}

// gantt flattens each container's states to the innermost one at every
// instant (what a Gantt chart shows), exactly or, past MaxSegments,
// aggregated into bins.
func (c *refCollector) refGantt(ri int, rules *signal.Rules, sig *signal.Signal, t0, t1, perSec float64, o PageOptions) gantt {
	g := gantt{Rows: slices.Clone(sig.Containers), Values: c.names, T0: t0, T1: t1}
	slices.SortFunc(g.Rows, naturalCompare) // CPU2 before CPU10
	for i, v := range c.names {
		cl, ok := c.folded[i]
		if !ok {
			cl = rules.Classify(v)
		}
		g.Classes = append(g.Classes, cl.String())
	}
	flat := make([][]seg, len(g.Rows))
	total := 0
	for i, name := range g.Rows {
		var ss []pageSpan
		for _, s := range c.spans[name] {
			if int(s.rules) == ri {
				ss = append(ss, s)
			}
		}
		flat[i] = innermost(ss, perSec)
		total += len(flat[i])
	}
	if total <= o.MaxSegments {
		g.Segs = make([][]float64, len(flat))
		for i, segs := range flat {
			row := make([]float64, 0, 3*len(segs))
			for _, s := range segs {
				row = append(row, round6(s.start-t0), round6(s.end-t0), float64(s.value))
			}
			g.Segs[i] = row
		}
		return g
	}
	g.Aggregated = true
	g.Bins = make([][]int, len(flat))
	width := (t1 - t0) / float64(o.GanttBins)
	for i, segs := range flat {
		g.Bins[i] = binDominant(segs, t0, width, o.GanttBins)
	}
	return g
}

// innermost turns a container's states (any order, nested) into the
// sequence of its innermost state: at each instant the open state of the
// highest imbrication decides ([start, end) intervals).
func innermost(ss []pageSpan, perSec float64) []seg {
	slices.SortStableFunc(ss, func(a, b pageSpan) int {
		return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(a.imb, b.imb))
	})
	var out []seg
	var stack []pageSpan
	emit := func(a, b float64, v int32) {
		if b <= a {
			return
		}
		if n := len(out); n > 0 && out[n-1].value == v && out[n-1].end == a/perSec {
			out[n-1].end = b / perSec
			return
		}
		out = append(out, seg{a / perSec, b / perSec, v})
	}
	now := math.Inf(-1)
	advance := func(t float64) { // close the states that end by t
		for len(stack) > 0 {
			top := stack[len(stack)-1]
			e := math.Min(top.end, t)
			emit(math.Max(now, top.start), e, top.value)
			now = math.Max(now, e)
			if top.end > t {
				return
			}
			stack = stack[:len(stack)-1]
		}
	}
	for _, s := range ss {
		advance(s.start)
		for len(stack) > 0 && stack[len(stack)-1].imb >= s.imb {
			stack = stack[:len(stack)-1]
		}
		now = math.Max(now, s.start)
		stack = append(stack, s)
	}
	advance(math.Inf(1))
	return out
}

// binDominant gives, per bin of width seconds from t0, the value covering
// most of it (−1 for none).
func binDominant(segs []seg, t0, width float64, n int) []int {
	out := make([]int, n)
	cover := map[int32]float64{}
	j := 0
	for b := range n {
		lo, hi := t0+float64(b)*width, t0+float64(b+1)*width
		clear(cover)
		for j < len(segs) && segs[j].end <= lo {
			j++
		}
		for k := j; k < len(segs) && segs[k].start < hi; k++ {
			cover[segs[k].value] += math.Min(segs[k].end, hi) - math.Max(segs[k].start, lo)
		}
		best, bestD := int32(-1), 0.0
		for v, d := range cover {
			if d > bestD || d == bestD && v < best {
				best, bestD = v, d
			}
		}
		out[b] = int(best)
	}
	return out
}

// occupancyOf averages the class counts over at most n bins.
func occupancyOf(sig *signal.Signal, perSec float64, n int) occupancy {
	o := occupancy{R: sig.R}
	for cl := signal.Class(0); cl < signal.NumClasses; cl++ {
		o.Classes = append(o.Classes, cl.String())
	}
	t0, t1 := sig.T0(), sig.End
	if !(t1 > t0) {
		return o
	}
	width := (t1 - t0) / float64(n)
	o.Y = make([][]float64, signal.NumClasses)
	i := 0
	for b := range n {
		lo, hi := t0+float64(b)*width, t0+float64(b+1)*width
		var acc [signal.NumClasses]float64
		for i+1 < len(sig.Steps) && sig.Steps[i+1].T <= lo {
			i++
		}
		for k := i; k < len(sig.Steps) && sig.Steps[k].T < hi; k++ {
			a := math.Max(sig.Steps[k].T, lo)
			e := hi
			if k+1 < len(sig.Steps) {
				e = math.Min(e, sig.Steps[k+1].T)
			}
			for cl := range acc {
				acc[cl] += float64(sig.Steps[k].Count[cl]) * (e - a)
			}
		}
		o.T = append(o.T, round6(lo/perSec))
		for cl := range acc {
			o.Y[cl] = append(o.Y[cl], round6(acc[cl]/width))
		}
	}
	return o
}

// classShare is the share of the containers' time in a class.
func classShare(sig *signal.Signal, cl signal.Class) float64 {
	var in float64
	for k, st := range sig.Steps {
		e := sig.End
		if k+1 < len(sig.Steps) {
			e = sig.Steps[k+1].T
		}
		in += float64(st.Count[cl]) * (e - st.T)
	}
	return in / (float64(sig.R) * (sig.End - sig.T0()))
}

// forecasts runs the default forecaster on the idle signal (idle>=25%)
// over the horizons, scores it, and keeps the middle horizon's series.
func (p *Page) refForecasts(sig *signal.Signal, perSec float64, o PageOptions) error {
	var steps forecast.Steps
	for _, st := range sig.Steps {
		steps.Add(st.T/perSec, int(st.Count[signal.Idle]), sig.R)
	}
	steps.End = sig.End / perSec
	hs := o.Horizons
	if len(hs) == 0 {
		hs = forecast.DefaultHorizons(steps.End - steps.T[0])
	}
	q, _ := forecast.ParseQuery("idle>=25%")
	var fs []tracecast.Forecast
	e, err := forecast.New(forecast.Config{Run: p.Title, Class: "idle", Queries: []forecast.Query{q}, Horizons: hs,
		Every: slices.Min(hs) / 10}, forecast.Sink{Forecast: func(f tracecast.Forecast) { fs = append(fs, f) }})
	if err != nil {
		return err
	}
	for i := range steps.T {
		e.Change(steps.T[i], steps.X[i], steps.R[i])
	}
	e.Finish(steps.End)
	if p.Skill, err = forecast.Verify(&steps, fs); err != nil {
		return err
	}
	mid := hs[len(hs)/2]
	var chart []tracecast.Forecast
	for _, f := range fs {
		if f.Horizon == mid {
			chart = append(chart, f)
		}
	}
	obs := forecast.Outcomes(&steps, chart)
	stride := max(1, len(chart)/o.MaxPoints)
	p.Fc = forecastChart{Query: q.Text, Horizon: forecast.HorizonLabel(mid)}
	for i := 0; i < len(chart); i += stride {
		f := chart[i]
		p.Fc.T = append(p.Fc.T, round6(f.IssuedAt))
		p.Fc.P = append(p.Fc.P, round6(f.P))
		p.Fc.Lo = append(p.Fc.Lo, nanAs(f.Lo, -1))
		p.Fc.Hi = append(p.Fc.Hi, nanAs(f.Hi, -1))
		p.Fc.Observed = append(p.Fc.Observed, nanAs(obs[i], -1))
	}
	return nil
}

// Close does nothing: page builds the report.
func (c *refCollector) Close(context.Context) error { return nil }
