// Package energy joins execution states with power samples, per node: it
// integrates each node's power (trapezoid rule for instantaneous samples,
// exact for counter-derived mean power) and attributes every slice of
// energy to the state classes active at that instant, per window and for
// the whole run.
//
// Semantics, in full:
//   - States come from Paje entities classified by signal rules (StarPU
//     "Worker State" values → idle/compute/comm/other; the innermost open
//     state decides, as in stages/signal). Containers map to nodes through
//     Collector's mapping, else through the container tree (SetNodeType:
//     the nearest ancestor of a type), else to the default node ("node0":
//     all workers on one node).
//   - Trace times are converted to seconds with the trace's unit;
//     power time = trace time in seconds + Options.Offset.
//   - Between two consecutive samples of a node, power is linear
//     (instantaneous samples: trapezoid) or constant (Mean samples: RAPL).
//     An interval longer than Options.MaxGap is not integrated: it is
//     reported as a gap and the windows it crosses are less covered.
//   - Energy is integrated only over the node's run, [first state start,
//     last state end]; each slice is split between the classes in
//     proportion to the number of the node's workers in each class
//     (occupancy-proportional attribution). Occupancy is also reported in
//     worker-seconds per class, which is what Yang et al.'s (2014) model and the
//     least-squares fit of per-state powers take.
//   - Samples may arrive out of order per node by up to Options.Lateness
//     seconds; later ones (and repeated timestamps) are dropped and counted. A window is final (and
//     emitted) once the node's integrated time has passed its end: memory
//     is the lateness buffer plus the open windows, not the stream.
package energy

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/models"
	"github.com/tracecast/tracecast/stages/signal"
)

// NumClasses is the number of state classes.
const NumClasses = int(signal.NumClasses)

// DefaultNode is the node of unmapped containers.
const DefaultNode = "node0"

// Timeline is one node's class counts over time (seconds).
type Timeline struct {
	Node  string
	R     int
	Steps []signal.Step
	T0    float64
	End   float64
	// Containers are the node's workers.
	Containers []string
}

// Collector gathers the states of each worker; Build groups workers into
// nodes.
type Collector struct {
	rules    *signal.Rules
	mapping  map[string]string
	def      string
	nodeType string
	builders map[string]*signal.Builder // per worker container
	parent   map[string]string          // container → parent container
	ctype    map[string]string          // container → container type
	one      []tracecast.Entity
	io       []ioSpan
	// ioOffset is the last AddIO offset; ioLost and ioOutside count, at
	// Build, the I/O intervals on nodes without workers and those outside
	// their node's run: what IOWarnings explains.
	ioOffset          float64
	ioLost, ioOutside int
	ioFirst, ioLast   float64 // span of the kept intervals, trace seconds
	runT0, runEnd     float64 // span of the runs, trace seconds
}

// ioSpan is a process's time in an I/O call, in seconds of trace time.
type ioSpan struct {
	node       string
	start, end float64
}

// AddIO takes "in I/O" intervals — the I/O-call stream's state records
// (container "pid N"; see stages/iotime) — as storage activity: while a
// process is in I/O, its node has one more activity in the storage class
// (signal.Other), beside its workers' classes. Times are seconds on the
// I/O stream's clock; offset is that clock minus trace time. A process goes
// to the node --map gives for its container ("pid N"), else the default
// node.
func (c *Collector) AddIO(es []tracecast.Entity, offset float64) {
	c.ioOffset = offset
	for i := range es {
		e := &es[i]
		if e.Nature != tracecast.NatureState || e.End <= e.Start {
			continue
		}
		n, ok := c.mapping[e.Container]
		if !ok {
			n = c.def
		}
		c.io = append(c.io, ioSpan{node: n, start: e.Start - offset, end: e.End - offset})
	}
}

// IOIntervals is the number of "in I/O" intervals AddIO kept: with the
// workers' states, what the storage class is made of.
func (c *Collector) IOIntervals() int { return len(c.io) }

// IOWarnings explain, after Build, why I/O calls given to AddIO add no
// storage: all of them outside the run (a wrong or missing I/O offset:
// strace -tt prints seconds since midnight), or on nodes with no worker.
// Some calls outside the run are not worth a warning (a process traced
// from before the application's start).
func (c *Collector) IOWarnings() []string {
	var ws []string
	if c.ioLost > 0 {
		ws = append(ws, fmt.Sprintf("%d of %d I/O calls are on nodes with no worker, so add no storage: map their processes (\"pid N\"=NODE) to a worker's node",
			c.ioLost, len(c.io)))
	}
	if kept := len(c.io) - c.ioLost; kept > 0 && c.ioOutside == kept {
		ws = append(ws, fmt.Sprintf("none of the %d I/O calls falls in the run, so storage is 0: they span %.6f–%.6f s on the I/O stream's clock, "+
			"the run %.6f–%.6f s of trace time, with an I/O offset of %g s; the offset is the I/O stream's time minus trace time "+
			"(strace -tt prints seconds since midnight), and %.6f would put the first call at the run's start",
			kept, c.ioFirst+c.ioOffset, c.ioLast+c.ioOffset, c.runT0, c.runEnd, c.ioOffset, c.ioFirst+c.ioOffset-c.runT0))
	}
	return ws
}

// NewCollector maps containers to nodes with mapping (nil: all on
// defaultNode, "" meaning DefaultNode). The rules must be compiled.
func NewCollector(rules *signal.Rules, mapping map[string]string, defaultNode string) *Collector {
	if defaultNode == "" {
		defaultNode = DefaultNode
	}
	return &Collector{rules: rules, mapping: mapping, def: defaultNode, builders: map[string]*signal.Builder{},
		parent: map[string]string{}, ctype: map[string]string{}}
}

// SetNodeType maps each worker not in the mapping to its nearest ancestor
// container of this type in the container tree (e.g. the StarPU "Memory
// Node" or a SimGrid "HOST"), named by that container's name; workers with
// no such ancestor go to the default node.
func (c *Collector) SetNodeType(t string) { c.nodeType = t }

// Add takes a batch of entities.
func (c *Collector) Add(es []tracecast.Entity) {
	for i := range es {
		e := &es[i]
		var name string
		switch {
		case e.Nature == tracecast.NatureContainer:
			c.parent[e.Value], c.ctype[e.Value] = e.Container, e.Type
			if e.Type != c.rules.ContainerType {
				continue
			}
			name = e.Value
		case e.Nature == tracecast.NatureState && e.Type == c.rules.StateType:
			name = e.Container
		default:
			continue
		}
		b := c.builders[name]
		if b == nil {
			b = signal.NewBuilder(c.rules)
			c.builders[name] = b
		}
		c.one = append(c.one[:0], *e)
		b.Add(c.one)
	}
}

// Node returns the node of a worker container.
func (c *Collector) Node(container string) string {
	if n, ok := c.mapping[container]; ok {
		return n
	}
	if c.nodeType != "" {
		seen := 0
		for p, ok := c.parent[container]; ok && seen < 1000; p, ok = c.parent[p] {
			if c.ctype[p] == c.nodeType {
				return p
			}
			seen++
		}
	}
	return c.def
}

type delta struct {
	t float64
	d [NumClasses]int32
}

// Build returns each node's timeline, in seconds: unitsPerSecond is the
// trace's time unit (1000 for StarPU's milliseconds). A node's class
// counts are the sum of its workers' (a worker is in the rules' Outside
// class before its first and after its last state).
func (c *Collector) Build(unitsPerSecond float64) (map[string]*Timeline, error) {
	if unitsPerSecond <= 0 {
		return nil, errors.New("energy: time unit must be positive")
	}
	names := make([]string, 0, len(c.builders))
	for n := range c.builders {
		names = append(names, n)
	}
	sort.Strings(names)
	type acc struct {
		tl     *Timeline
		deltas []delta
	}
	nodes := map[string]*acc{}
	for _, w := range names {
		n := c.Node(w)
		a := nodes[n]
		if a == nil {
			a = &acc{tl: &Timeline{Node: n, T0: math.Inf(1), End: math.Inf(-1)}}
			nodes[n] = a
		}
		a.tl.R++
		a.tl.Containers = append(a.tl.Containers, w)
		sig, err := c.builders[w].Build()
		if err != nil {
			continue // a worker without states: Outside all along
		}
		var prev [NumClasses]int32
		prev[c.rules.Outside] = 1
		for _, st := range sig.Steps {
			var d delta
			d.t = st.T / unitsPerSecond
			for k := range NumClasses {
				d.d[k] = st.Count[k] - prev[k]
			}
			prev = st.Count
			a.deltas = append(a.deltas, d)
		}
		a.tl.T0 = math.Min(a.tl.T0, sig.Steps[0].T/unitsPerSecond)
		a.tl.End = math.Max(a.tl.End, sig.End/unitsPerSecond)
	}
	c.ioLost, c.ioOutside = 0, 0
	c.ioFirst, c.ioLast, c.runT0, c.runEnd = math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, a := range nodes {
		c.runT0, c.runEnd = math.Min(c.runT0, a.tl.T0), math.Max(c.runEnd, a.tl.End)
	}
	for _, io := range c.io {
		a := nodes[io.node]
		if a == nil {
			c.ioLost++
			continue // no worker on that node: nothing to share the power with
		}
		c.ioFirst, c.ioLast = math.Min(c.ioFirst, io.start), math.Max(c.ioLast, io.end)
		if io.end <= a.tl.T0 || io.start >= a.tl.End {
			c.ioOutside++
		}
		var up, down delta
		up.t, down.t = io.start, io.end
		up.d[signal.Other], down.d[signal.Other] = 1, -1
		a.deltas = append(a.deltas, up, down)
	}
	out := map[string]*Timeline{}
	for n, a := range nodes {
		if len(a.deltas) == 0 {
			continue
		}
		sort.SliceStable(a.deltas, func(i, j int) bool { return a.deltas[i].t < a.deltas[j].t })
		var cur [NumClasses]int32
		cur[c.rules.Outside] = int32(a.tl.R)
		for i := 0; i < len(a.deltas); {
			t := a.deltas[i].t
			for i < len(a.deltas) && a.deltas[i].t == t {
				for k := range NumClasses {
					cur[k] += a.deltas[i].d[k]
				}
				i++
			}
			if len(a.tl.Steps) == 0 || cur != a.tl.Steps[len(a.tl.Steps)-1].Count {
				a.tl.Steps = append(a.tl.Steps, signal.Step{T: t, Count: cur})
			}
		}
		out[n] = a.tl
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("energy: no %q states in the trace (rules %s)", c.rules.StateType, c.rules.Name)
	}
	return out, nil
}

// Options configure a Joiner.
type Options struct {
	// Window is the window length in seconds (0: one window, the run).
	Window float64
	// MaxGap is the longest interval between two samples of a node that is
	// integrated (0: 5 s).
	MaxGap float64
	// Lateness is how late (seconds) a sample may arrive after a later
	// sample of its node and still be used.
	Lateness float64
	// Offset is added to trace seconds to get power-stream time.
	Offset float64
	// OnSlice, when set, is called for every slice of energy integrated,
	// in time order per node: what attributes energy to something finer
	// than classes (the tasks stage's per-task energy) uses it.
	OnSlice func(Slice)
}

// Slice is one integrated piece of a node's run: between A and B (trace
// seconds) the power goes linearly from WattsA to WattsB (constant for
// counter-derived samples), the node's state does not change, and its
// energy is shared equally among Activities (the node's workers, plus its
// processes in I/O).
type Slice struct {
	Node           string
	A, B           float64
	WattsA, WattsB float64
	Activities     int32
}

// EnergyBetween is the energy of the slice between a and b (clamped to
// the slice), joules: the integral of its linear power.
func (s Slice) EnergyBetween(a, b float64) float64 {
	a, b = math.Max(a, s.A), math.Min(b, s.B)
	if b <= a || s.B <= s.A {
		return 0
	}
	at := func(t float64) float64 { return s.WattsA + (s.WattsB-s.WattsA)*(t-s.A)/(s.B-s.A) }
	return (at(a) + at(b)) / 2 * (b - a)
}

// NodeWindow sums one node's window over classes.
type NodeWindow struct {
	Node   string  `json:"node"`
	Window int64   `json:"window"`
	Start  float64 `json:"start"`
	End    float64 `json:"end"`
	// Covered is the integrated time in the window (seconds); less than
	// End − Start when a gap or the run's ends cut it.
	Covered float64 `json:"covered_s"`
	EnergyJ float64 `json:"energy_j"`
	// ClassEnergy and Occupancy are by class index (idle, compute, comm, other).
	ClassEnergy [NumClasses]float64 `json:"class_energy_j"`
	Occupancy   [NumClasses]float64 `json:"occupancy_s"`
}

// Gap is a stretch of a node's run without usable power samples.
type Gap struct {
	Node  string  `json:"node"`
	Start float64 `json:"start"`
	End   float64 `json:"end"`
}

// Stats count what the join did with the samples.
type Stats struct {
	Samples   int64
	Late      int64
	Unmatched int64 // samples of nodes with no states
	Gaps      int64
	GapS      float64
	// MaxBuffered is the most samples held in lateness buffers at once.
	MaxBuffered int
}

type nodeState struct {
	tl      *Timeline
	span    SampleSpan
	buf     []tracecast.PowerSample // sorted by T, within Lateness of maxT
	maxT    float64
	have    bool
	prev    tracecast.PowerSample
	step    int
	windows map[int64]*NodeWindow
	total   NodeWindow
}

// Joiner joins power samples with node timelines.
type Joiner struct {
	opts     Options
	nodes    map[string]*nodeState
	windows  []NodeWindow
	gaps     []Gap
	stats    Stats
	buffered int
	unknown  map[string]int64
}

// NewJoiner returns a joiner over the timelines.
func NewJoiner(tls map[string]*Timeline, opts Options) *Joiner {
	if opts.MaxGap <= 0 {
		opts.MaxGap = 5
	}
	j := &Joiner{opts: opts, nodes: map[string]*nodeState{}, unknown: map[string]int64{}}
	for n, tl := range tls {
		j.nodes[n] = &nodeState{tl: tl, windows: map[int64]*NodeWindow{}, maxT: math.Inf(-1),
			total: NodeWindow{Node: n, Window: -1, Start: tl.T0, End: tl.End}}
	}
	return j
}

// Add takes a batch of samples (any order across nodes).
func (j *Joiner) Add(samples []tracecast.PowerSample) {
	for _, s := range samples {
		j.stats.Samples++
		ns := j.nodes[s.Node]
		if ns == nil {
			j.stats.Unmatched++
			j.unknown[s.Node]++
			continue
		}
		if ns.span.N == 0 {
			ns.span.First, ns.span.Last = s.T, s.T
		}
		ns.span.N++
		ns.span.First, ns.span.Last = math.Min(ns.span.First, s.T), math.Max(ns.span.Last, s.T)
		s.T -= j.opts.Offset
		if ns.have && s.T <= ns.prev.T || s.T < ns.maxT-j.opts.Lateness {
			j.stats.Late++
			continue
		}
		// Insert in order (the buffer is short: within Lateness).
		i := sort.Search(len(ns.buf), func(i int) bool { return ns.buf[i].T > s.T })
		ns.buf = append(ns.buf, tracecast.PowerSample{})
		copy(ns.buf[i+1:], ns.buf[i:])
		ns.buf[i] = s
		j.buffered++
		if j.buffered > j.stats.MaxBuffered {
			j.stats.MaxBuffered = j.buffered
		}
		ns.maxT = math.Max(ns.maxT, s.T)
		k := 0
		for k < len(ns.buf) && ns.buf[k].T <= ns.maxT-j.opts.Lateness {
			j.consume(ns, ns.buf[k])
			k++
		}
		if k > 0 {
			ns.buf = append(ns.buf[:0], ns.buf[k:]...)
			j.buffered -= k
			j.emitDone(ns, false)
		}
	}
}

// consume integrates from the node's previous sample to s.
func (j *Joiner) consume(ns *nodeState, s tracecast.PowerSample) {
	if s.Mean {
		s.Since -= j.opts.Offset
		if !ns.have || ns.prev.T != s.Since {
			// A counter interval knows its own start; what lies between
			// the previous sample and it is a gap.
			if ns.have {
				j.gap(ns, ns.prev.T, s.Since)
			}
			ns.prev, ns.have = tracecast.PowerSample{T: s.Since, Node: s.Node, Watts: s.Watts}, true
		}
	}
	if !ns.have {
		ns.prev, ns.have = s, true
		return
	}
	p := ns.prev
	ns.prev = s
	a, b := math.Max(p.T, ns.tl.T0), math.Min(s.T, ns.tl.End)
	if b <= a {
		return
	}
	if s.T-p.T > j.opts.MaxGap {
		j.gap(ns, a, b)
		return
	}
	p0, p1 := p.Watts, s.Watts
	if s.Mean {
		p0 = s.Watts
	}
	at := func(t float64) float64 { return p0 + (p1-p0)*(t-p.T)/(s.T-p.T) }
	steps := ns.tl.Steps
	for ns.step+1 < len(steps) && steps[ns.step+1].T <= a {
		ns.step++
	}
	for a < b {
		cut := b
		if ns.step+1 < len(steps) && steps[ns.step+1].T < cut {
			cut = steps[ns.step+1].T
		}
		w := j.window(a)
		if j.opts.Window > 0 {
			cut = math.Min(cut, float64(w+1)*j.opts.Window)
		}
		if cut <= a { // floating point at a window edge
			cut = math.Nextafter(a, math.Inf(1))
		}
		e := (at(a) + at(cut)) / 2 * (cut - a)
		cnt := steps[ns.step].Count
		// Every activity gets an equal share: the workers (R of them) and,
		// with an I/O stream, the processes in I/O (storage) beside them.
		var acts int32
		for _, n := range cnt {
			acts += n
		}
		if j.opts.OnSlice != nil {
			j.opts.OnSlice(Slice{Node: ns.tl.Node, A: a, B: cut, WattsA: at(a), WattsB: at(cut), Activities: acts})
		}
		for _, nw := range [2]*NodeWindow{ns.win(j, w), &ns.total} {
			nw.Covered += cut - a
			nw.EnergyJ += e
			for c := range NumClasses {
				if cnt[c] != 0 {
					nw.ClassEnergy[c] += e * float64(cnt[c]) / float64(acts)
					nw.Occupancy[c] += float64(cnt[c]) * (cut - a)
				}
			}
		}
		a = cut
		for ns.step+1 < len(steps) && steps[ns.step+1].T <= a {
			ns.step++
		}
	}
}

// gap records [a, b] ∩ the node's run as a gap.
func (j *Joiner) gap(ns *nodeState, a, b float64) {
	a, b = math.Max(a, ns.tl.T0), math.Min(b, ns.tl.End)
	if b <= a {
		return
	}
	j.gaps = append(j.gaps, Gap{Node: ns.tl.Node, Start: a, End: b})
	j.stats.Gaps++
	j.stats.GapS += b - a
}

func (j *Joiner) window(t float64) int64 {
	if j.opts.Window <= 0 {
		return 0
	}
	return int64(math.Floor(t / j.opts.Window))
}

func (ns *nodeState) win(j *Joiner, w int64) *NodeWindow {
	nw := ns.windows[w]
	if nw == nil {
		nw = &NodeWindow{Node: ns.tl.Node, Window: w, Start: ns.tl.T0, End: ns.tl.End}
		if j.opts.Window > 0 {
			nw.Start, nw.End = float64(w)*j.opts.Window, float64(w+1)*j.opts.Window
		}
		ns.windows[w] = nw
	}
	return nw
}

// emitDone moves the windows the node's integration has passed to the
// output (all of them at the end).
func (j *Joiner) emitDone(ns *nodeState, all bool) {
	if !all && (j.opts.Window <= 0 || !ns.have) {
		return
	}
	limit := int64(math.MaxInt64)
	if !all {
		limit = j.window(math.Min(ns.prev.T, ns.tl.End))
	}
	var ws []int64
	for w := range ns.windows {
		if w < limit {
			ws = append(ws, w)
		}
	}
	sort.Slice(ws, func(a, b int) bool { return ws[a] < ws[b] })
	for _, w := range ws {
		j.windows = append(j.windows, *ns.windows[w])
		delete(ns.windows, w)
	}
}

// Result is what a join produced: the rows of the energy stage's outputs
// and what a report needs besides (coverage, gaps, timelines). The stage
// emits it whole with its result option.
type Result struct {
	// Windows are per node and window, sorted by node then window.
	Windows []NodeWindow
	// Totals are per node over the run (Window −1), sorted by node.
	Totals []NodeWindow
	Gaps   []Gap
	Stats  Stats
	// UnknownNodes counts samples per node name with no states.
	UnknownNodes map[string]int64
	Timelines    map[string]*Timeline
	// Power is, per node with states, what came of its power stream: how
	// many samples named it and their span, in power time. With Offset
	// and MaxGap (the join's), it is what Check and Warnings explain a
	// node without energy from.
	Power          map[string]SampleSpan
	Offset, MaxGap float64
	// Warnings say what in the join is likely a mistake, each with its
	// reason: samples of nodes with no states, a node none of whose run
	// is covered while others are. The energy stage adds the collector's
	// (Collector.IOWarnings).
	Warnings []string
}

// SampleSpan is a node's power samples: how many, and the first and last
// time (power time; arrival order does not matter).
type SampleSpan struct {
	N           int64
	First, Last float64
}

// ErrNoEnergy is Check's error: no power sample was integrated on any
// node, which is a mistake (a wrong node name or time offset), not a
// measurement of 0 J.
var ErrNoEnergy = errors.New("no energy integrated")

// Check fails with ErrNoEnergy and the reason of every node when no node's
// run was covered by its power samples: the rows would say 0 J. A node
// without energy while others have some is a warning (Warnings).
func (r *Result) Check() error {
	var covered float64
	for _, t := range r.Totals {
		covered += t.Covered
	}
	if covered > 0 {
		return nil
	}
	if len(r.Totals) == 0 {
		return fmt.Errorf("%w: no node with states", ErrNoEnergy)
	}
	var why []string
	for _, t := range r.Totals {
		why = append(why, r.uncovered(t.Node))
	}
	return fmt.Errorf("%w: %s", ErrNoEnergy, strings.Join(why, "; "))
}

// uncovered says why a node's run got no energy.
func (r *Result) uncovered(node string) string {
	sp, tl := r.Power[node], r.Timelines[node]
	a, b := tl.T0+r.Offset, tl.End+r.Offset
	switch {
	case sp.N == 0 && r.Stats.Samples == 0:
		return "no power sample arrived (an empty stream, or a metric filter that keeps nothing?)"
	case sp.N == 0:
		return fmt.Sprintf("no power sample names node %q, where the trace's workers are (the samples name %s): "+
			"put the workers on the power stream's nodes (--node, --map, --node-type; node, map, node_type in a pipeline)",
			node, r.unknownList())
	case sp.Last < a || sp.First > b:
		return fmt.Sprintf("node %q's %d power samples span %.6f–%.6f s but its run is %.6f–%.6f s in power time "+
			"(trace time + an offset of %g s): the clocks do not meet; the offset (--offset, offset) is power time minus trace time, "+
			"%.6f would put the first sample at the run's start (a Kwollect or other epoch-stamped stream needs the run's start epoch)",
			node, sp.N, sp.First, sp.Last, a, b, r.Offset, sp.First-tl.T0)
	default:
		return fmt.Sprintf("node %q's %d power samples (%.6f–%.6f s) integrate none of its run %.6f–%.6f s in power time: "+
			"fewer than two samples fall in it, or every interval between them is longer than the largest integrated gap (%g s)",
			node, sp.N, sp.First, sp.Last, a, b, r.MaxGap)
	}
}

// unknownList names the nodes of samples with no states, most samples
// first, at most five.
func (r *Result) unknownList() string {
	names := make([]string, 0, len(r.UnknownNodes))
	for n := range r.UnknownNodes {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		a, b := r.UnknownNodes[names[i]], r.UnknownNodes[names[j]]
		return a > b || a == b && names[i] < names[j]
	})
	var parts []string
	for i, n := range names {
		if i == 5 {
			parts = append(parts, fmt.Sprintf("and %d more", len(names)-5))
			break
		}
		parts = append(parts, fmt.Sprintf("%q (%d)", n, r.UnknownNodes[n]))
	}
	if len(parts) == 0 {
		return "no node"
	}
	return strings.Join(parts, ", ")
}

// warnings are the Result's Warnings, from the rest of it; none when
// Check fails, whose error says it all.
func (r *Result) warnings() []string {
	if r.Check() != nil {
		return nil
	}
	var ws []string
	if len(r.UnknownNodes) > 0 {
		var nodes []string
		for _, t := range r.Totals {
			nodes = append(nodes, fmt.Sprintf("%q", t.Node))
		}
		ws = append(ws, fmt.Sprintf("power samples of nodes with no states are not used: %s; the trace's workers are on %s (--node, --map, --node-type)",
			r.unknownList(), strings.Join(nodes, ", ")))
	}
	for _, t := range r.Totals {
		if t.Covered == 0 {
			ws = append(ws, fmt.Sprintf("no energy for node %q: %s", t.Node, r.uncovered(t.Node)))
		}
	}
	return ws
}

// TakeWindows returns the windows final so far and forgets them.
func (j *Joiner) TakeWindows() []NodeWindow {
	w := j.windows
	j.windows = nil
	return w
}

// Finish integrates what is buffered and returns everything not taken.
func (j *Joiner) Finish() *Result {
	names := make([]string, 0, len(j.nodes))
	for n := range j.nodes {
		names = append(names, n)
	}
	sort.Strings(names)
	res := &Result{UnknownNodes: j.unknown, Timelines: map[string]*Timeline{}, Power: map[string]SampleSpan{},
		Offset: j.opts.Offset, MaxGap: j.opts.MaxGap}
	for _, n := range names {
		ns := j.nodes[n]
		res.Timelines[n] = ns.tl
		res.Power[n] = ns.span
		for _, s := range ns.buf {
			j.consume(ns, s)
		}
		j.buffered -= len(ns.buf)
		ns.buf = nil
		j.emitDone(ns, true)
		res.Totals = append(res.Totals, ns.total)
		if !ns.have {
			j.gaps = append(j.gaps, Gap{Node: n, Start: ns.tl.T0, End: ns.tl.End})
			j.stats.Gaps++
			j.stats.GapS += ns.tl.End - ns.tl.T0
		}
	}
	res.Windows = j.windows
	sort.SliceStable(res.Windows, func(a, b int) bool {
		if res.Windows[a].Node != res.Windows[b].Node {
			return res.Windows[a].Node < res.Windows[b].Node
		}
		return res.Windows[a].Window < res.Windows[b].Window
	})
	res.Gaps = j.gaps
	res.Stats = j.stats
	res.Warnings = res.warnings()
	return res
}

// Totals sums windows per node over the run.
func Totals(ws []NodeWindow, tls map[string]*Timeline) []NodeWindow {
	by := map[string]*NodeWindow{}
	var names []string
	for n, tl := range tls {
		by[n] = &NodeWindow{Node: n, Window: -1, Start: tl.T0, End: tl.End}
		names = append(names, n)
	}
	for _, w := range ws {
		t := by[w.Node]
		t.Covered += w.Covered
		t.EnergyJ += w.EnergyJ
		for c := range NumClasses {
			t.ClassEnergy[c] += w.ClassEnergy[c]
			t.Occupancy[c] += w.Occupancy[c]
		}
	}
	sort.Strings(names)
	out := make([]NodeWindow, 0, len(names))
	for _, n := range names {
		out = append(out, *by[n])
	}
	return out
}

// Rows flattens windows into node × class × window rows.
func Rows(ws []NodeWindow) []tracecast.EnergyRow {
	out := make([]tracecast.EnergyRow, 0, len(ws)*NumClasses)
	for _, w := range ws {
		for c := range NumClasses {
			out = append(out, tracecast.EnergyRow{Node: w.Node, Window: w.Window, Start: w.Start, End: w.End,
				Class: ClassName(signal.Class(c)), EnergyJ: w.ClassEnergy[c], OccupancyS: w.Occupancy[c]})
		}
	}
	return out
}

// ClassName names a class in energy outputs: Yang et al.'s (2014) storage is the
// signal's "other" class (I/O calls, and worker states no rule classifies).
func ClassName(c signal.Class) string {
	if c == signal.Other {
		return "storage"
	}
	return c.String()
}

// ModelOccupancy turns a window into Yang et al.'s (2014) model input: compute → App,
// comm → Net, other → Storage (the rules' class for what is neither), in
// worker-seconds; T is the covered time.
func (w *NodeWindow) ModelOccupancy() models.Occupancy {
	return models.Occupancy{T: w.Covered, TApp: w.Occupancy[signal.Compute],
		TNet: w.Occupancy[signal.Comm], TStorage: w.Occupancy[signal.Other]}
}

// FitStatePowers fits Yang et al.'s (2014) per-state powers to the windows (only
// windows covered for at least minCover of their length are used).
// The powers are per node; the increments are per busy worker.
func FitStatePowers(ws []NodeWindow, minCover float64) (models.StateFit, error) {
	var obs []models.EnergyObservation
	for i := range ws {
		w := &ws[i]
		if w.Covered <= 0 || w.Covered < minCover*(w.End-w.Start) {
			continue
		}
		obs = append(obs, models.EnergyObservation{Occupancy: w.ModelOccupancy(), E: w.EnergyJ})
	}
	return models.FitStatePowers(obs)
}
