package report

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/parsers/power"
	"github.com/tracecast/tracecast/pipelines"
	"github.com/tracecast/tracecast/stages/energy"
	"github.com/tracecast/tracecast/stages/signal"
)

// EnergyInputs are the power streams of the HTML report's energy section
// and how they are joined with the trace: the inputs and options of
// tracecast energy, given to the same components (a power parser per
// stream, the energy stage), so that the page shows the numbers that
// command prints.
type EnergyInputs struct {
	// Power are the power-stream files (plain or gzip), in any of the
	// formats of tracecast energy --power; one source each.
	Power []string
	// Format is the power parser's format: auto (""), csv, jsonl, rapl,
	// kwollect.
	Format string
	// Metric keeps only this Kwollect metric_id ("": all).
	Metric string
	// Lenient skips bad power lines instead of failing.
	Lenient bool
	// Stage are the energy stage's options: rules, node, map, node_type,
	// offset, window, max_gap, lateness, time_unit, as tracecast energy's
	// flags. Start from energy.DefaultStageConfig.
	Stage energy.StageConfig
	// MaxPowerPoints bounds the power samples the collector keeps for the
	// chart, all nodes together: past it the neighbouring samples of the
	// node with the most are merged two by two (mean, minimum, maximum
	// kept). 0: 1<<16 (3 MiB), 20 times the chart's points for one node.
	MaxPowerPoints int
	// MaxNodes bounds the power-stream node names the collector follows;
	// samples of further nodes are counted and reported. 0: 4096.
	MaxNodes int
}

// Validate checks the inputs as tracecast energy checks its flags.
func (in *EnergyInputs) Validate() error {
	var errs []error
	if len(in.Power) == 0 {
		errs = append(errs, errors.New("power: no power stream given"))
	}
	if _, err := power.ParseFormat(cmp.Or(in.Format, "auto")); err != nil {
		errs = append(errs, err)
	}
	if in.MaxPowerPoints < 0 || in.MaxNodes < 0 {
		errs = append(errs, errors.New("max power points and max nodes must not be negative"))
	}
	if err := in.Stage.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// PowerSourceID is the id of the i-th power source AddTo adds: power,
// power-2, power-3, ...
func PowerSourceID(i int) string {
	if i == 0 {
		return "power"
	}
	return fmt.Sprintf("power-%d", i+1)
}

// EnergyStageID is the id of the energy stage AddTo adds.
const EnergyStageID = "energy"

// AddTo adds to spec one file source with a power parser per stream, the
// energy stage fed by the trace source traceID and them (its result option
// on), and the sink sinkID, of type sinkID (the runner registers the
// EnergyPageCollector under that name), fed by the stage and the power
// sources.
func (in *EnergyInputs) AddTo(spec *pipelines.Spec, traceID, sinkID string) error {
	if err := in.Validate(); err != nil {
		return err
	}
	taken := map[string]bool{}
	for _, ns := range [][]pipelines.Node{spec.Sources, spec.Stages, spec.Sinks} {
		for _, n := range ns {
			taken[n.ID] = true
		}
	}
	if !taken[traceID] {
		return fmt.Errorf("energy section: no source %q in the pipeline", traceID)
	}
	ids := []string{EnergyStageID, sinkID}
	for i := range in.Power {
		ids = append(ids, PowerSourceID(i))
	}
	for _, id := range ids {
		if taken[id] {
			return fmt.Errorf("energy section: the pipeline already has a component %q", id)
		}
	}
	o := in.Stage
	stage := map[string]any{
		"rules": o.Rules, "node": o.Node, "node_type": o.NodeType, "window": float64(o.Window), "max_gap": float64(o.MaxGap),
		"lateness": float64(o.Lateness), "offset": float64(o.Offset), "result": true,
	}
	if o.TimeUnit != "" { // else the unit the paje parser detects
		stage["time_unit"] = o.TimeUnit
	}
	if len(o.Map) > 0 {
		stage["map"] = o.Map
	}
	inputs := []string{traceID}
	for i, p := range in.Power {
		id := PowerSourceID(i)
		spec.Sources = append(spec.Sources, pipelines.Node{ID: id, Type: "file", Options: map[string]any{"path": p},
			Parser: &pipelines.Node{Type: "power", Options: map[string]any{"format": cmp.Or(in.Format, "auto"), "lenient": in.Lenient,
				"node": cmp.Or(o.Node, energy.DefaultNode), "metric": in.Metric}}})
		inputs = append(inputs, id)
	}
	spec.Stages = append(spec.Stages, pipelines.Node{ID: EnergyStageID, Type: "energy", Inputs: inputs, Options: stage})
	spec.Sinks = append(spec.Sinks, pipelines.Node{ID: sinkID, Type: sinkID, Inputs: append([]string{EnergyStageID}, inputs[1:]...)})
	return nil
}

// EnergyPageCollector is the sink of the energy section: it keeps the energy
// stage's result and, bounded, the power samples for the chart and the
// energy of the whole power streams.
type EnergyPageCollector struct {
	in      EnergyInputs
	res     *energy.Result
	nodes   map[string]*powerNode
	kept    int // buckets over all nodes
	dropped int64
	streams map[string]int64 // samples per stream (file)
}

// powerNode is what the collector keeps of one power-stream node.
type powerNode struct {
	b []powerBucket
	// stride is how many samples a bucket takes (each halving doubles
	// it), so that buckets stay even over the stream, old and new alike.
	stride      int64
	samples     int64
	first, last float64 // power time
	// whole integrates the node's whole stream with the energy stage's
	// join (same integration, gaps and lateness), over all time.
	whole *energy.Joiner
}

// powerBucket is one or more neighbouring samples of a node: their time
// span (power time), sum, minimum and maximum of watts.
type powerBucket struct {
	t0, t1, sum, lo, hi float64
	n                   int64
}

// NewEnergyPageCollector returns the sink for in (validated by AddTo).
func NewEnergyPageCollector(in EnergyInputs) *EnergyPageCollector {
	if in.MaxPowerPoints == 0 {
		in.MaxPowerPoints = 1 << 16
	}
	if in.MaxNodes == 0 {
		in.MaxNodes = 4096
	}
	return &EnergyPageCollector{in: in, nodes: map[string]*powerNode{}, streams: map[string]int64{}}
}

// Write keeps the energy stage's result and the power samples; the stage's
// rows pass by.
func (c *EnergyPageCollector) Write(_ context.Context, b tracecast.Batch) error {
	switch items := b.Items.(type) {
	case []*energy.Result:
		if len(items) > 0 {
			c.res = items[0]
		}
	case []tracecast.PowerSample:
		c.streams[b.Stream] += int64(len(items))
		// Runs of one node's samples go to its join at once (a meter's
		// stream is mostly one node).
		for i := 0; i < len(items); {
			j := i + 1
			for j < len(items) && items[j].Node == items[i].Node {
				j++
			}
			c.addRun(items[i:j])
			i = j
		}
	}
	return nil
}

// Close does nothing: the page reads what was collected.
func (c *EnergyPageCollector) Close(context.Context) error { return nil }

// addRun takes samples of one node.
func (c *EnergyPageCollector) addRun(ss []tracecast.PowerSample) {
	pn := c.node(ss[0].Node)
	if pn == nil {
		c.dropped += int64(len(ss))
		return
	}
	pn.whole.Add(ss)
	for i := range ss {
		c.keep(pn, &ss[i])
	}
}

// add takes one sample.
func (c *EnergyPageCollector) add(s tracecast.PowerSample) { c.addRun([]tracecast.PowerSample{s}) }

// node returns what is kept of a node, nil past MaxNodes.
func (c *EnergyPageCollector) node(name string) *powerNode {
	pn := c.nodes[name]
	if pn == nil {
		if len(c.nodes) >= c.in.MaxNodes {
			return nil
		}
		// A timeline of one idle worker over all time: the join then
		// integrates the node's whole stream.
		var idle [energy.NumClasses]int32
		idle[signal.Idle] = 1
		tl := &energy.Timeline{Node: name, R: 1, T0: -math.MaxFloat64, End: math.MaxFloat64,
			Steps: []signal.Step{{T: -math.MaxFloat64, Count: idle}}}
		pn = &powerNode{stride: 1, first: math.Inf(1), last: math.Inf(-1),
			whole: energy.NewJoiner(map[string]*energy.Timeline{name: tl}, energy.Options{MaxGap: float64(c.in.Stage.MaxGap), Lateness: float64(c.in.Stage.Lateness)})}
		c.nodes[name] = pn
	}
	return pn
}

// keep adds a sample of pn to the chart's buckets, within the bound.
func (c *EnergyPageCollector) keep(pn *powerNode, s *tracecast.PowerSample) {
	pn.samples++
	t0 := s.T
	if s.Mean {
		t0 = s.Since
	}
	pn.first, pn.last = math.Min(pn.first, t0), math.Max(pn.last, s.T)
	one := powerBucket{t0: t0, t1: s.T, sum: s.Watts, lo: s.Watts, hi: s.Watts, n: 1}
	if k := len(pn.b) - 1; k >= 0 && pn.b[k].n < pn.stride {
		pn.b[k] = pn.b[k].merge(one)
		return
	}
	pn.b = append(pn.b, one)
	c.kept++
	if c.kept > c.in.MaxPowerPoints {
		c.halve()
	}
}

// halve merges the neighbouring samples of the node that has the most.
func (c *EnergyPageCollector) halve() {
	var big *powerNode
	for _, pn := range c.nodes {
		if big == nil || len(pn.b) > len(big.b) {
			big = pn
		}
	}
	if len(big.b) < 2 {
		return // as many nodes as points: nothing to merge
	}
	out := big.b[:0]
	for i := 0; i < len(big.b); i += 2 {
		m := big.b[i]
		if i+1 < len(big.b) {
			m = m.merge(big.b[i+1])
		}
		out = append(out, m)
	}
	c.kept -= len(big.b) - len(out)
	big.b = out
	big.stride *= 2
}

func (m powerBucket) merge(o powerBucket) powerBucket {
	return powerBucket{t0: math.Min(m.t0, o.t0), t1: math.Max(m.t1, o.t1), sum: m.sum + o.sum,
		lo: math.Min(m.lo, o.lo), hi: math.Max(m.hi, o.hi), n: m.n + o.n}
}

// energySection is the energy part of the page: tables, warnings and the
// power chart.
type energySection struct {
	Files []string `json:"files"`
	// Nodes are the nodes with workers, each with its classes.
	Nodes []energyNode `json:"nodes"`
	// All sums the classes over the nodes (set with several nodes).
	All []energyClass `json:"all,omitempty"`
	// MeasuredJ is integrated over the nodes' runs, AttributedJ the part
	// split between the classes, StreamJ the whole power streams (all
	// their nodes and times).
	MeasuredJ   float64       `json:"measured_j"`
	AttributedJ float64       `json:"attributed_j"`
	StreamJ     float64       `json:"stream_j"`
	Totals      []SummaryItem `json:"totals"`
	Warnings    []string      `json:"warnings"`
	Power       powerChart    `json:"power"`
}

type energyNode struct {
	Node     string        `json:"node"`
	Workers  int           `json:"workers"`
	RunS     float64       `json:"run_s"`
	CoveredS float64       `json:"covered_s"`
	EnergyJ  float64       `json:"energy_j"`
	NoData   bool          `json:"no_data"`
	Classes  []energyClass `json:"classes"`
	// Total, Covered and Mean are the node's total line and mean power,
	// formatted as tracecast energy prints them.
	Total   string `json:"-"`
	Covered string `json:"-"`
	Mean    string `json:"-"`
}

// energyClass is one line of a table, formatted as tracecast energy
// prints it (J to the mJ, share to 0.1%, occupancy in worker-seconds).
type energyClass struct {
	Class     string  `json:"class"`
	EnergyJ   float64 `json:"energy_j"`
	Energy    string  `json:"-"`
	Share     string  `json:"-"`
	Occupancy string  `json:"-"`
}

// powerChart is the power of the streams' nodes over the run, each node
// as points: per bin of the page's time bins that has samples, their mean
// time (trace seconds), mean, minimum and maximum watts. The page joins a
// node's neighbouring points when they are at most MaxGap apart, as the
// integration bridges them.
type powerChart struct {
	Series []powerSeries `json:"series"`
	// Min and Max bound the drawn watts (the y axis).
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	MaxGap float64 `json:"max_gap"`
	// Summed: too many nodes to draw each, the one series is their sum
	// (each node interpolated at the bins' middles).
	Summed bool `json:"summed"`
}

type powerSeries struct {
	Node string    `json:"node"`
	T    []float64 `json:"t"`
	Mean []float64 `json:"mean"`
	Lo   []float64 `json:"lo,omitempty"`
	Hi   []float64 `json:"hi,omitempty"`
}

// maxPowerLines is how many nodes the chart draws one by one; past it, it
// draws their sum.
const maxPowerLines = 8

// section builds the energy section for a page whose run is [t0, t1]
// trace seconds, its charts n points wide.
func (c *EnergyPageCollector) section(t0, t1 float64, n int) (*energySection, error) {
	if c.res == nil {
		return nil, errors.New("energy: the pipeline ended without the energy stage's result")
	}
	res := c.res
	s := &energySection{Files: c.in.Power}
	off := float64(c.in.Stage.Offset)
	var all [energy.NumClasses]float64
	var allOcc [energy.NumClasses]float64
	gapsBy := map[string][]energy.Gap{}
	for _, g := range res.Gaps {
		gapsBy[g.Node] = append(gapsBy[g.Node], g)
	}
	streamNodes := slices.Sorted(maps.Keys(c.nodes))
	for _, t := range res.Totals {
		tl := res.Timelines[t.Node]
		nd := energyNode{Node: t.Node, Workers: tl.R, RunS: t.End - t.Start, CoveredS: t.Covered, EnergyJ: t.EnergyJ, NoData: !(t.Covered > 0)}
		attributed := 0.0
		for cl := range energy.NumClasses {
			share := 0.0
			if t.EnergyJ > 0 {
				share = t.ClassEnergy[cl] / t.EnergyJ * 100
			}
			nd.Classes = append(nd.Classes, energyClass{Class: energy.ClassName(signal.Class(cl)), EnergyJ: t.ClassEnergy[cl],
				Energy: fmt.Sprintf("%.3f", t.ClassEnergy[cl]), Share: fmt.Sprintf("%.1f%%", share), Occupancy: fmt.Sprintf("%.4f", t.Occupancy[cl])})
			attributed += t.ClassEnergy[cl]
			all[cl] += t.ClassEnergy[cl]
			allOcc[cl] += t.Occupancy[cl]
		}
		nd.Total, nd.Covered = fmt.Sprintf("%.3f", t.EnergyJ), fmt.Sprintf("%.4f", t.Covered)
		nd.Mean = fmt.Sprintf("%.2f W", t.EnergyJ/math.Max(t.Covered, 1e-300))
		s.MeasuredJ += t.EnergyJ
		s.AttributedJ += attributed
		s.Nodes = append(s.Nodes, nd)
		s.Warnings = append(s.Warnings, c.nodeWarnings(t, tl, gapsBy[t.Node], streamNodes, off)...)
	}
	if len(s.Nodes) > 1 {
		for cl := range energy.NumClasses {
			share := 0.0
			if s.MeasuredJ > 0 {
				share = all[cl] / s.MeasuredJ * 100
			}
			s.All = append(s.All, energyClass{Class: energy.ClassName(signal.Class(cl)), EnergyJ: all[cl],
				Energy: fmt.Sprintf("%.3f", all[cl]), Share: fmt.Sprintf("%.1f%%", share), Occupancy: fmt.Sprintf("%.4f", allOcc[cl])})
		}
	}
	for _, name := range streamNodes {
		r := c.nodes[name].whole.Finish()
		if len(r.Totals) > 0 {
			s.StreamJ += r.Totals[0].EnergyJ
		}
	}
	s.Warnings = append(s.Warnings, c.streamWarnings(res)...)
	pct := func(a, b float64) string {
		if !(b > 0) {
			return "–"
		}
		return fmt.Sprintf("%.1f%%", 100*a/b)
	}
	s.Totals = []SummaryItem{
		{"measured over the run", fmt.Sprintf("%.3f J (power integrated over each node's run, where samples cover it)", s.MeasuredJ)},
		{"attributed to state classes", fmt.Sprintf("%.3f J (%s of the measured)", s.AttributedJ, pct(s.AttributedJ, s.MeasuredJ))},
		{"whole power streams", fmt.Sprintf("%.3f J over all their samples and nodes; %.3f J outside the runs or on nodes without workers", s.StreamJ, math.Max(0, s.StreamJ-s.MeasuredJ))},
	}
	s.Power = c.chart(streamNodes, t0, t1, n)
	return s, nil
}

// nodeWarnings says what makes a node's numbers incomplete or empty: no
// sample of it, none within its run (a clock offset), gaps, partial cover.
func (c *EnergyPageCollector) nodeWarnings(t energy.NodeWindow, tl *energy.Timeline, gaps []energy.Gap, streamNodes []string, off float64) []string {
	var out []string
	pn := c.nodes[t.Node]
	run := t.End - t.Start
	switch {
	case pn == nil:
		have := "no node at all"
		if len(streamNodes) > 0 {
			have = "nodes " + listNames(streamNodes, 8)
		}
		return append(out, fmt.Sprintf("node %s: no power sample of this node (the power streams have %s): its energy is unknown, not 0 J; "+
			"name it with --node, or place the workers with --map CONTAINER=NODE or --node-type", t.Node, have))
	case !(t.Covered > 0):
		w := fmt.Sprintf("node %s: no power sample falls within its run (trace time %.6g–%.6g s); its %d samples cover trace time %.10g–%.10g s "+
			"(power time − offset %g s): its energy is unknown, not 0 J", t.Node, tl.T0, tl.End, pn.samples, pn.first-off, pn.last-off, off)
		if off == 0 && pn.first > 1e8 {
			w += "; the samples' times look like Unix epoch seconds: give --offset, the run's start epoch"
		} else {
			w += "; check --offset (power time minus trace time)"
		}
		return append(out, w)
	}
	if len(gaps) > 0 {
		gs := 0.0
		for _, g := range gaps {
			gs += g.End - g.Start
		}
		out = append(out, fmt.Sprintf("node %s: %s in the power samples (longer than --max-gap), %.4f s of its run (%.1f%%) not integrated, first %.4f–%.4f s: the energy there is missing, not 0 J",
			t.Node, plural(len(gaps), "gap"), gs, 100*gs/run, gaps[0].Start, gaps[0].End))
	} else if t.Covered < 0.999*run {
		out = append(out, fmt.Sprintf("node %s: power samples cover %.4f s of its %.4f s run (%.1f%%): the rest is not in the energy",
			t.Node, t.Covered, run, 100*t.Covered/run))
	}
	return out
}

// streamWarnings says what the join left out: samples of nodes without
// workers, late samples, streams without samples, nodes not followed.
func (c *EnergyPageCollector) streamWarnings(res *energy.Result) []string {
	var out []string
	if len(res.UnknownNodes) > 0 {
		names := slices.Sorted(maps.Keys(res.UnknownNodes))
		var n int64
		for _, k := range names {
			n += res.UnknownNodes[k]
		}
		out = append(out, fmt.Sprintf("%d power samples of nodes with no workers in the trace (%s) are not attributed: "+
			"name the workers' node with --node, or place them with --map CONTAINER=NODE or --node-type", n, listNames(names, 8)))
	}
	if res.Stats.Late > 0 {
		out = append(out, fmt.Sprintf("%d power samples dropped: out of order by more than --lateness (%g s), or repeated times", res.Stats.Late, c.in.Stage.Lateness))
	}
	if c.dropped > 0 {
		out = append(out, fmt.Sprintf("%d power samples of more than %d nodes are not drawn nor counted in the streams' energy", c.dropped, c.in.MaxNodes))
	}
	var total int64
	for _, n := range c.streams {
		total += n
	}
	if total == 0 {
		out = append(out, "the power streams gave no sample: "+strings.Join(c.in.Power, ", "))
	} else {
		for _, p := range c.in.Power {
			if c.streams[p] == 0 {
				out = append(out, p+": no power sample")
			}
		}
	}
	return out
}

// chart averages each node's kept samples into n bins over [t0, t1] trace
// seconds (a counter sample's time is its interval's middle); past
// maxPowerLines nodes it draws their sum.
func (c *EnergyPageCollector) chart(nodes []string, t0, t1 float64, n int) (pc powerChart) {
	pc = powerChart{MaxGap: float64(c.in.Stage.MaxGap), Min: math.Inf(1)}
	defer func() { // no point drawn
		if math.IsInf(pc.Min, 1) {
			pc.Min = 0
		}
	}()
	if pc.MaxGap <= 0 {
		pc.MaxGap = 5 // the join's default
	}
	if !(t1 > t0) || n <= 0 || len(nodes) == 0 {
		return pc
	}
	off := float64(c.in.Stage.Offset)
	width := (t1 - t0) / float64(n)
	series := func(name string) powerSeries {
		// Empty, not nil: JSON null would break the page's script.
		ps := powerSeries{Node: name, T: []float64{}, Mean: []float64{}}
		ts, sum, cnt := make([]float64, n), make([]float64, n), make([]int64, n)
		lo, hi := make([]float64, n), make([]float64, n)
		for _, b := range c.nodes[name].b {
			mid := (b.t0+b.t1)/2 - off
			k := int(math.Floor((mid - t0) / width))
			if k == n && mid <= t1 { // the run's last instant
				k--
			}
			if k < 0 || k >= n {
				continue
			}
			if cnt[k] == 0 || b.lo < lo[k] {
				lo[k] = b.lo
			}
			if cnt[k] == 0 || b.hi > hi[k] {
				hi[k] = b.hi
			}
			ts[k] += mid * float64(b.n)
			sum[k] += b.sum
			cnt[k] += b.n
		}
		for k := range n {
			if cnt[k] > 0 {
				ps.T = append(ps.T, round6(ts[k]/float64(cnt[k])))
				ps.Mean = append(ps.Mean, round6(sum[k]/float64(cnt[k])))
				ps.Lo, ps.Hi = append(ps.Lo, round6(lo[k])), append(ps.Hi, round6(hi[k]))
			}
		}
		return ps
	}
	if len(nodes) <= maxPowerLines {
		for _, name := range nodes {
			ps := series(name)
			if len(ps.Hi) > 0 {
				pc.Min, pc.Max = math.Min(pc.Min, slices.Min(ps.Lo)), math.Max(pc.Max, slices.Max(ps.Hi))
			}
			pc.Series = append(pc.Series, ps)
		}
		return pc
	}
	pc.Summed = true
	sum := powerSeries{Node: fmt.Sprintf("sum of %d nodes", len(nodes)), T: []float64{}, Mean: []float64{}}
	total, have := make([]float64, n), make([]bool, n)
	for _, name := range nodes {
		ps := series(name)
		j := 0
		for k := range n {
			tc := t0 + (float64(k)+0.5)*width
			for j+1 < len(ps.T) && ps.T[j+1] <= tc {
				j++
			}
			switch {
			case len(ps.T) == 0:
			case ps.T[j] == tc || j+1 == len(ps.T) && math.Abs(tc-ps.T[j]) <= width:
				total[k] += ps.Mean[j]
				have[k] = true
			case j+1 < len(ps.T) && ps.T[j] <= tc && ps.T[j+1]-ps.T[j] <= pc.MaxGap:
				f := (tc - ps.T[j]) / (ps.T[j+1] - ps.T[j])
				total[k] += ps.Mean[j] + f*(ps.Mean[j+1]-ps.Mean[j])
				have[k] = true
			}
		}
	}
	for k := range n {
		if have[k] {
			sum.T = append(sum.T, round6(t0+(float64(k)+0.5)*width))
			sum.Mean = append(sum.Mean, round6(total[k]))
			pc.Min, pc.Max = math.Min(pc.Min, total[k]), math.Max(pc.Max, total[k])
		}
	}
	pc.Series = []powerSeries{sum}
	return pc
}

// listNames joins up to n names, saying how many more there are.
func listNames(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:n], ", "), len(names)-n)
}

// plural is "1 gap", "2 gaps".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
