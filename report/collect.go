package report

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/forecast"
	"github.com/tracecast/tracecast/internal/strmemo"
	stage "github.com/tracecast/tracecast/stages/backfill"
	"github.com/tracecast/tracecast/stages/signal"
)

// The report keeps what it draws at the page's resolution, not the
// trace: its memory does not grow with the trace's length
// (TestReportMemoryFlat). A survey (PageSurvey) finds which rules select
// states, the selected containers (R, the Gantt's rows) and the run's
// span: what the bins, the default forecast horizons and the forecasts'
// thresholds need before the first state is drawn: a first pass over the
// trace, or a guess (PageGuess) checked by the pass that draws. The pass
// that draws (PageCollector) follows the parser's watermark, as the forecast stage
// does: once no state starting earlier can still come, each container's
// states are flattened to the innermost one at every instant, into exact
// segments (while there are at most MaxSegments) and per-bin coverage,
// and the class counts (signal.Live) feed the occupancy's bins, the class
// shares and the forecast engine, of which the page keeps the chart's
// horizon's forecasts and outcomes, and the scores at the end (the
// engine's scores are Verify's: TestRollingSkillMatchesVerify in package
// forecast). The page is the one the single-pass collector made, which
// kept every selected state and the whole step function (3.1 GB on a 2.1
// GB trace): TestPageMatchesReference.

// PageSurvey is the first pass over a trace for its report: which rule set
// selects states (auto: StarPU's workers, else SMPI's ranks), the
// selected containers, the first state start and the last state end. It
// keeps the containers' names only.
type PageSurvey struct {
	rules string
	cands []*surveyCand
}

type surveyCand struct {
	rules      *signal.Rules
	containers map[string]struct{}
	stated     map[string]struct{}   // the containers with states
	counts     map[countVar]struct{} // the task counts (spells.go)
	last       string                // the container of the previous state (most repeat it)
	seen       strmemo.Map[struct{}] // the containers with states, by the string's address first
	t0, end    float64
	states     bool
	// guess is what this pass was guessed to find (PageGuess), wrong
	// set once a state, container or task count says otherwise.
	guess *surveyCand
	wrong bool
}

// NewPageSurvey returns the first pass for rules auto, starpu or smpi.
func NewPageSurvey(rules string) (*PageSurvey, error) {
	names := []string{rules}
	if rules == "auto" {
		names = []string{"starpu", "smpi"}
	}
	s := &PageSurvey{rules: rules}
	for _, n := range names {
		mk, ok := signal.Presets[n]
		if !ok {
			return nil, fmt.Errorf("rules %q: want auto, starpu or smpi", rules)
		}
		r := mk()
		if err := r.Compile(); err != nil {
			return nil, err
		}
		s.cands = append(s.cands, &surveyCand{rules: r, containers: map[string]struct{}{}, stated: map[string]struct{}{}, counts: map[countVar]struct{}{}, t0: math.Inf(1), end: math.Inf(-1)})
	}
	return s, nil
}

// Write takes a batch of entities; other records pass by.
func (s *PageSurvey) Write(_ context.Context, b tracecast.Batch) error {
	es, ok := b.Items.([]tracecast.Entity)
	if !ok {
		return nil
	}
	for _, c := range s.cands {
		for i := range es {
			e := &es[i]
			switch {
			case e.Nature == tracecast.NatureState && e.Type == c.rules.StateType:
				if e.Container != c.last {
					c.last = e.Container
					if _, ok := c.seen.Get(e.Container); !ok {
						c.stateIn(e.Container)
					}
				}
				c.t0, c.end, c.states = math.Min(c.t0, e.Start), math.Max(c.end, e.End), true
				if g := c.guess; g != nil && (e.Start < g.t0 || e.End > g.end) {
					c.wrong = true
				}
			case e.Nature == tracecast.NatureContainer && e.Type == c.rules.ContainerType:
				n := len(c.containers)
				c.containers[e.Value] = struct{}{}
				if g := c.guess; g != nil && len(c.containers) > n && !has(g.containers, e.Value) {
					c.wrong = true
				}
			case e.Nature == tracecast.NatureVariable && (e.Type == stage.ReadyVariable || e.Type == stage.SubmittedVariable):
				if len(c.counts) < maxCountVars {
					n, v := len(c.counts), countVar{e.Container, e.Type == stage.SubmittedVariable}
					c.counts[v] = struct{}{}
					if g := c.guess; g != nil && len(c.counts) > n && !has(g.counts, v) {
						c.wrong = true
					}
				}
			}
		}
	}
	return nil
}

// stateIn takes the first state of a container.
func (c *surveyCand) stateIn(name string) {
	c.seen.Put(name, struct{}{})
	n, m := len(c.containers), len(c.stated)
	c.containers[name] = struct{}{}
	c.stated[name] = struct{}{}
	if g := c.guess; g != nil && (len(c.containers) > n && !has(g.containers, name) || len(c.stated) > m && !has(g.stated, name)) {
		c.wrong = true
	}
}

func has[K comparable](m map[K]struct{}, k K) bool {
	_, ok := m[k]
	return ok
}

// chosen is the candidate whose rules select states (the first that has
// any), or nil.
func (s *PageSurvey) chosen() *surveyCand {
	for _, c := range s.cands {
		if c.states {
			return c
		}
	}
	return nil
}

// ForgetsItems: Write keeps nothing of a batch (tracecast.ItemsForgetter),
// so that the parser refills its batches.
func (s *PageSurvey) ForgetsItems() bool { return true }

// Close does nothing: Collector reads the survey.
func (s *PageSurvey) Close(context.Context) error { return nil }

// Collector returns the second pass's sink, for the rule set that selects
// states; an error when none does (the words of every command).
func (s *PageSurvey) Collector(o PageOptions) (*PageCollector, error) {
	var firstErr error
	for _, c := range s.cands {
		if !c.states {
			if firstErr == nil {
				firstErr = fmt.Errorf("no %q states on %q containers in this trace (rules %s)", c.rules.StateType, c.rules.ContainerType, c.rules.Name)
			}
			continue
		}
		return newPageCollector(c, o)
	}
	rules := make([]*signal.Rules, len(s.cands))
	for i, c := range s.cands {
		rules[i] = c.rules
	}
	return nil, signal.NothingToCount(rules, firstErr)
}

// PageGuess is a file's survey guessed before its run is read, so that
// the report reads the file once where the guess holds: the survey of
// the file's first MiB (which rules select states, the containers,
// the first state start, the task counts) and the latest time of its
// last lines as the last state end. The page is collected on it while
// the pass surveys the run (Write); if the survey it makes is the guess
// (Holds), the page is the one the second of two passes makes from it,
// since the collector has had the same survey and the same batches.
// Otherwise the caller reads the file again with the pass's survey
// (Survey).
type PageGuess struct {
	cand  *surveyCand // the guess, of the rule set that selects states
	idx   int         // its rank in the survey's candidates
	full  *PageSurvey // the pass's survey
	wrong bool
}

// Guess turns the survey of a file's beginning into a guess at the
// whole file's, with the run ending at end (trace units): false when no
// rule set selects states in it or its states end after end.
func (s *PageSurvey) Guess(end float64) (*PageGuess, bool) {
	c := s.chosen()
	if c == nil || c.end > end || math.IsInf(end, 0) || math.IsNaN(end) {
		return nil, false
	}
	g := *c
	g.end, g.guess, g.wrong = end, nil, false
	full, err := NewPageSurvey(s.rules)
	if err != nil {
		return nil, false
	}
	idx := slices.Index(s.cands, c)
	// The pass surveys the guess's rule set and those before it: a later
	// one is never chosen, whatever the trace holds.
	full.cands = full.cands[:idx+1]
	full.cands[idx].guess = &g
	return &PageGuess{cand: &g, idx: idx, full: full}, true
}

// Collector is the page collector of the guessed survey.
func (g *PageGuess) Collector(o PageOptions) (*PageCollector, error) {
	return newPageCollector(g.cand, o)
}

// Write surveys a batch: false from the first batch the guess cannot
// hold after (the collector must then not see it, nor any later one).
func (g *PageGuess) Write(b tracecast.Batch) bool {
	_ = g.full.Write(context.Background(), b)
	for _, c := range g.full.cands[:g.idx] {
		g.wrong = g.wrong || c.states
	}
	g.wrong = g.wrong || g.full.cands[g.idx].wrong
	return !g.wrong
}

// Holds tells, once every batch is written, whether the pass's survey is
// the guess.
func (g *PageGuess) Holds() bool {
	c := g.full.cands[g.idx]
	return !g.wrong && g.full.chosen() == c && c.t0 == g.cand.t0 && c.end == g.cand.end &&
		len(c.containers) == len(g.cand.containers) && len(c.stated) == len(g.cand.stated) && len(c.counts) == len(g.cand.counts)
}

// Survey is the pass's survey (complete once every batch is written):
// the one to read the file again with when the guess did not hold.
func (g *PageGuess) Survey() *PageSurvey { return g.full }

// PageCollector is the pass over a trace that draws its report (from
// PageSurvey.Collector or PageGuess.Collector): it keeps what the page
// draws, at the page's resolution.
type PageCollector struct {
	o       PageOptions
	rules   *signal.Rules
	perSec  float64
	t0, end float64 // the run, in trace units (the survey's)
	r       int

	// The Gantt: a row per selected container, the state values' names.
	rows     map[string]*ganttRow
	rowNames []string // naturally sorted
	values   map[string]int
	names    []string
	folded   map[int]signal.Class // the "(other CLASS states)" values (MaxGanttValues)
	segs     int                  // exact segments so far, over all rows
	exact    bool                 // still within MaxSegments
	g0, gw   float64              // the Gantt's bins: start and width, seconds
	nStates  int
	counts   [8]int  // by nature
	ganttW   float64 // the watermark the Gantt rows are drawn to
	countsW  float64 // the watermark the counts are swept to
	closed   bool
	lastName string // the container of the previous state, and its row
	lastRow  *ganttRow
	// valueIdx is each value's index (c.value's, folded beyond
	// MaxGanttValues), looked up by the string's address first (the
	// parser interns values); at most maxValueIdx of them.
	valueIdx strmemo.Map[int]

	// The class counts: the step function, as it becomes final.
	live     *signal.Live
	lastT    float64 // the latest change time (late states count then)
	groupT   float64 // the changes at groupT, counts after them: cur
	cur      [signal.NumClasses]int32
	grouping bool
	step     [signal.NumClasses]int32 // the step in force since stepT
	stepT    float64
	stepping bool
	occ      [signal.NumClasses][]float64 // per bin, count × time
	share    [signal.NumClasses]float64

	// The forecasts: the engine, fed the steps of the idle count as
	// forecast.Steps.Add keeps them (idle).
	engine   *forecast.Engine
	idle     stepsFeed
	hs       []float64
	mid      float64
	chart    []chartPoint
	maxChart int   // maxChartPoints (tests lower it)
	every    int64 // the chart keeps every every-th forecast
	nChart   int64
	obsNext  int // the next chart point whose outcome is due
	skills   []tracecast.Skill
	rel      map[skillKey]*[10]forecast.Bin

	// The spell forecasts drawn over the Gantt chart (spells.go).
	spells *spellTrack
}

// maxValueIdx bounds valueIdx: a trace naming every state differently
// looks the rest up in values each time.
const maxValueIdx = 1 << 16

type skillKey struct {
	q string
	h float64
}

type chartPoint struct {
	t, p, lo, hi, obs float64
}

// maxChartPoints bounds the forecasts the chart keeps before it decimates
// them (a given horizon over a long run issues one every tenth of it):
// beyond it every other one is dropped, and so on.
const maxChartPoints = 1 << 16

func newPageCollector(sv *surveyCand, o PageOptions) (*PageCollector, error) {
	if o.MaxSegments == 0 {
		o.MaxSegments = 60_000
	}
	if o.GanttBins == 0 {
		o.GanttBins = 1500
	}
	if o.MaxPoints == 0 {
		o.MaxPoints = 3000
	}
	if o.MaxSpells == 0 {
		o.MaxSpells = maxSpellTicks
	}
	unit := o.Unit
	if unit == "" {
		unit = map[bool]string{true: "ms", false: "s"}[sv.rules.Name == "starpu"]
	}
	c := &PageCollector{o: o, rules: sv.rules, perSec: tracecast.PerSecond(unit), t0: sv.t0, end: sv.end, r: len(sv.containers),
		rows: map[string]*ganttRow{}, values: map[string]int{}, exact: true,
		ganttW: math.Inf(-1), countsW: math.Inf(-1), lastT: math.Inf(-1), every: 1, maxChart: maxChartPoints, rel: map[skillKey]*[10]forecast.Bin{}}
	for n := range sv.containers {
		c.rowNames = append(c.rowNames, n)
	}
	slices.SortFunc(c.rowNames, naturalCompare) // CPU2 before CPU10
	t0s, t1s := c.t0/c.perSec, c.end/c.perSec
	c.g0, c.gw = t0s, (t1s-t0s)/float64(o.GanttBins)
	for i, n := range c.rowNames {
		c.rows[n] = newGanttRow(o.GanttBins)
		c.rows[n].id = int32(i)
		_, c.rows[n].spell = sv.stated[n]
	}
	var err error
	if c.spells, err = newSpellTrack(c, sv.stated, sv.counts, t0s, t1s); err != nil {
		return nil, err
	}
	for cl := range c.occ {
		c.occ[cl] = make([]float64, o.MaxPoints)
	}
	// The counts' own rules: Classify memoises, and WriteCounts may run
	// with WriteStates.
	lr := signal.Presets[sv.rules.Name]()
	if err := lr.Compile(); err != nil {
		return nil, err
	}
	c.live = signal.NewLive(lr, signal.Idle, 0)
	c.live.MergeRuns() // counts only
	c.live.FromStart(c.r)

	c.hs = o.Horizons
	if len(c.hs) == 0 {
		c.hs = forecast.DefaultHorizons(t1s - t0s)
	}
	c.mid = c.hs[len(c.hs)/2]
	q, _ := forecast.ParseQuery("idle>=25%")
	c.engine, err = forecast.New(forecast.Config{Run: o.Title, Class: "idle", Queries: []forecast.Query{q}, Horizons: c.hs,
		Every: slices.Min(c.hs) / 10}, forecast.Sink{Forecast: c.forecast, Outcome: c.outcome, Skill: c.skill})
	if err != nil {
		return nil, err
	}
	c.idle = stepsFeed{change: c.engine.Change}
	// The first step, at t_0: every container in the rules' Outside class
	// until the changes at t_0 (signal.Builder's first step is at t_0
	// whatever they change).
	c.step[sv.rules.Outside] = int32(c.r)
	c.stepT, c.stepping = c.t0, true
	c.idle.add(c.t0/c.perSec, int(c.step[signal.Idle]), c.r)
	return c, nil
}

// Write takes a batch of entities; other records pass by. It is
// WriteStates, then WriteCounts: the two read the batch and write apart,
// and may run at the same time (the report command runs them on two
// goroutines).
func (c *PageCollector) Write(_ context.Context, b tracecast.Batch) error {
	c.WriteStates(b)
	c.WriteCounts(b)
	return nil
}

// WriteStates takes a batch's states into the Gantt chart and its
// entities into the summary's counts.
func (c *PageCollector) WriteStates(b tracecast.Batch) {
	es, ok := b.Items.([]tracecast.Entity)
	if !ok {
		return
	}
	for i := range es {
		e := &es[i]
		c.counts[e.Nature&7]++
		if e.Nature != tracecast.NatureState || e.Type != c.rules.StateType {
			if e.Nature == tracecast.NatureVariable {
				c.spells.variable(e)
			}
			continue
		}
		if e.Container != c.lastName { // most states are of the container of the one before
			c.lastName, c.lastRow = e.Container, c.rows[e.Container]
		}
		row := c.lastRow
		if row == nil {
			continue // a container the first pass did not see (the file changed)
		}
		v, ok := c.valueIdx.Get(e.Value)
		if !ok {
			if v, ok = c.values[e.Value]; !ok {
				v = c.value(e.Value)
			}
			if c.valueIdx.Len() < maxValueIdx {
				c.valueIdx.Put(e.Value, v)
			}
		}
		sp := pageSpan{e.Start, e.End, int32(v), int16(e.Imbrication), 0}
		if !row.arrived || !row.lastArrived.extends(sp) {
			c.nStates++
		}
		row.lastArrived, row.arrived = sp, true
		row.add(sp)
	}
	// Draw everything that starts before the watermark: no state
	// starting earlier can still come.
	if w := signal.StateWatermark(b, c.rules.StateType); !math.IsNaN(w) && w > c.ganttW {
		c.ganttW = w
		for _, n := range c.rowNames {
			c.rows[n].sweep(w, c)
		}
		c.spells.feed(false)
	}
}

// WriteCounts takes a batch's states into the class counts: the
// occupancy, the class shares and the forecasts.
func (c *PageCollector) WriteCounts(b tracecast.Batch) {
	es, ok := b.Items.([]tracecast.Entity)
	if !ok {
		return
	}
	c.live.Add(es)
	if w := signal.StateWatermark(b, c.rules.StateType); !math.IsNaN(w) && w > c.countsW {
		c.countsW = w
		c.live.CountChanges(w, c.change)
	}
}

// SpellsAsync has the collector hand the spell forecaster's work (the
// backfill engine the Gantt chart's spell overlay runs: a third of the
// report's CPU time on the 2.1 GB copy) to run, batch by batch in order,
// instead of doing it within WriteStates; Close calls wait, which must
// return once every batch given to run is done, before it reads the
// forecaster's results. The report command runs the batches on a
// goroutine of its own. Call it before the first Write.
func (c *PageCollector) SpellsAsync(run func(func()), wait func()) {
	c.spells.run, c.spells.wait = run, wait
}

// ForgetsItems: Write keeps nothing of a batch but copies
// (tracecast.ItemsForgetter), so that the parser refills its batches.
func (c *PageCollector) ForgetsItems() bool { return true }

// Close draws what is left (once: again does nothing).
func (c *PageCollector) Close(context.Context) error {
	if c.closed {
		return nil
	}
	c.closed = true
	for _, n := range c.rowNames {
		c.rows[n].sweep(math.Inf(1), c)
		c.rows[n].finish(c)
	}
	c.spells.feed(true)
	c.live.CountChanges(math.Inf(1), c.change)
	c.endGroup()
	if c.stepping {
		c.interval(c.stepT, c.end, &c.step, true)
	}
	c.idle.finish()
	c.engine.Finish(c.end / c.perSec)
	c.spells.close()
	return nil
}

// value gives a new state value its index, or the index of its class's
// "(other CLASS states)" beyond MaxGanttValues.
func (c *PageCollector) value(name string) int {
	if len(c.names) >= MaxGanttValues {
		cl := c.rules.Classify(name)
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

// change takes the class counts after a change at t. The changes at one
// instant make one step, none when they cancel out (signal.Builder's
// steps).
func (c *PageCollector) change(t float64, counts *[signal.NumClasses]int32, _ int) {
	if t < c.lastT {
		t = c.lastT // a late state: counted at the latest time seen, as the forecast stage does
	}
	c.lastT = t
	if c.grouping && t != c.groupT {
		c.endGroup()
	}
	c.groupT, c.cur, c.grouping = t, *counts, true
}

// endGroup makes the changes at groupT a step, if they changed the counts.
func (c *PageCollector) endGroup() {
	if !c.grouping {
		return
	}
	c.grouping = false
	if c.stepping && c.cur == c.step {
		return
	}
	if c.stepping {
		c.interval(c.stepT, c.groupT, &c.step, false)
	}
	c.step, c.stepT, c.stepping = c.cur, c.groupT, true
	c.idle.add(c.groupT/c.perSec, int(c.cur[signal.Idle]), c.r)
}

// interval adds the step counts in force over [a, b) to the occupancy's
// bins and the class shares; last: it is the last step, which the
// occupancy extends to each bin's end (as occupancyOf did).
func (c *PageCollector) interval(a, b float64, counts *[signal.NumClasses]int32, last bool) {
	for cl := range c.share {
		c.share[cl] += float64(counts[cl]) * (b - a)
	}
	n := len(c.occ[0])
	if !(c.end > c.t0) {
		return
	}
	width := (c.end - c.t0) / float64(n)
	k := max(0, min(n-1, int((a-c.t0)/width)))
	for k > 0 && c.t0+float64(k)*width > a {
		k--
	}
	for ; k < n; k++ {
		lo, hi := c.t0+float64(k)*width, c.t0+float64(k+1)*width
		if !last && b <= lo {
			break
		}
		if a >= hi {
			continue
		}
		e := hi
		if !last {
			e = math.Min(e, b)
		}
		d := e - math.Max(a, lo)
		for cl := range c.occ {
			c.occ[cl][k] += float64(counts[cl]) * d
		}
	}
}

// forecast keeps the chart's horizon's forecasts, at most maxChartPoints
// (every every-th one).
func (c *PageCollector) forecast(f tracecast.Forecast) {
	if f.Horizon != c.mid {
		return
	}
	j := c.nChart
	c.nChart++
	if j%c.every != 0 {
		return
	}
	c.chart = append(c.chart, chartPoint{f.IssuedAt, f.P, f.Lo, f.Hi, math.NaN()})
	if len(c.chart) == c.maxChart {
		for i := range len(c.chart) / 2 {
			c.chart[i] = c.chart[2*i]
		}
		c.chart = c.chart[:len(c.chart)/2]
		c.obsNext = (c.obsNext + 1) / 2 // the first kept point without its outcome
		c.every *= 2
	}
}

// outcome sets the outcome of a chart point, and counts every outcome in
// its group's reliability bins.
func (c *PageCollector) outcome(o tracecast.Outcome) {
	k := skillKey{o.Query, o.Horizon}
	rel := c.rel[k]
	if rel == nil {
		rel = new([10]forecast.Bin)
		c.rel[k] = rel
	}
	bin := &rel[min(int(o.P*10), 9)]
	bin.N++
	bin.MeanP += o.P
	bin.MeanOutcome += o.ObservedP
	if o.Horizon != c.mid {
		return
	}
	for c.obsNext < len(c.chart) && c.chart[c.obsNext].t < o.IssuedAt {
		c.obsNext++
	}
	if c.obsNext < len(c.chart) && c.chart[c.obsNext].t == o.IssuedAt {
		c.chart[c.obsNext].obs = o.ObservedP
		c.obsNext++
	}
}

// skill keeps the scores the engine publishes at the end.
func (c *PageCollector) skill(s tracecast.Skill) {
	if s.End != "" {
		c.skills = append(c.skills, s)
	}
}

// stepsFeed hands the engine the steps forecast.Steps.Add would keep (a
// change at the time of the previous one replaces it, one that changes
// nothing makes no step), each once it is final.
type stepsFeed struct {
	change  func(t float64, x, r int)
	pending bool // t, x, r is the last step, not handed yet
	t       float64
	x, r    int
	handed  bool // hx, hr is the last step handed
	hx, hr  int
}

func (s *stepsFeed) add(t float64, x, r int) {
	if s.pending && s.t == t {
		s.x, s.r = x, r
		if s.handed && s.hx == x && s.hr == r {
			s.pending = false
		}
		return
	}
	if s.pending && s.x == x && s.r == r || !s.pending && s.handed && s.hx == x && s.hr == r {
		return
	}
	s.finish()
	s.pending, s.t, s.x, s.r = true, t, x, r
}

// finish hands the last step.
func (s *stepsFeed) finish() {
	if s.pending {
		s.change(s.t, s.x, s.r)
		s.pending, s.handed, s.hx, s.hr = false, true, s.x, s.r
	}
}

// ganttRow flattens one container's states to the innermost one at every
// instant, as they become final: the states received and not swept (as
// signal.Live keeps them: buf in (start, imbrication, arrival) order, a
// heap of those that came out of it — states arrive as they end, nested
// ones before theirs), the open stack, the last segment (merged with the
// next when it goes on), and the segments so far: exact (while the page
// keeps them) and per bin, the state covering most of each.
type ganttRow struct {
	id          int32 // its index in rowNames
	spell       bool  // the spell forecaster follows it (a container with states)
	buf         []pendingSpan
	head        int
	late        []pendingSpan
	seq         uint64
	stack       []pageSpan
	now         float64
	last        seg
	hasLast     bool
	lastArrived pageSpan
	arrived     bool

	segs  []float64 // start, end, value triples, seconds from the run's start
	bins  []int32
	bin   int // the bin being covered
	cover []valueCover
}

type pendingSpan struct {
	pageSpan
	seq uint64
}

type valueCover struct {
	v int32
	d float64
}

func newGanttRow(bins int) *ganttRow {
	r := &ganttRow{now: math.Inf(-1), bins: make([]int32, bins)}
	for i := range r.bins {
		r.bins[i] = -1
	}
	return r
}

// before orders states by start, then imbrication, then arrival.
func (a *pendingSpan) before(b *pendingSpan) bool {
	return a.start < b.start || a.start == b.start && (a.imb < b.imb || a.imb == b.imb && a.seq < b.seq)
}

// add takes a state: appended to buf when it goes after buf's last one,
// else pushed on the heap.
func (r *ganttRow) add(sp pageSpan) {
	p := pendingSpan{sp, r.seq}
	r.seq++
	if n := len(r.buf); n == r.head || !p.before(&r.buf[n-1]) {
		r.buf = append(r.buf, p)
		return
	}
	h := append(r.late, p)
	for i := len(h) - 1; i > 0; {
		parent := (i - 1) / 2
		if !h[i].before(&h[parent]) {
			break
		}
		h[i], h[parent] = h[parent], h[i]
		i = parent
	}
	r.late = h
}

// next removes and returns the first state received if it starts before w.
func (r *ganttRow) next(w float64) (pageSpan, bool) {
	inBuf := r.head < len(r.buf)
	if len(r.late) > 0 && (!inBuf || r.late[0].before(&r.buf[r.head])) {
		if !(r.late[0].start < w) {
			return pageSpan{}, false
		}
		h := r.late
		top := h[0].pageSpan
		n := len(h) - 1
		h[0] = h[n]
		h = h[:n]
		for i := 0; ; {
			m, lc, rc := i, 2*i+1, 2*i+2
			if lc < n && h[lc].before(&h[m]) {
				m = lc
			}
			if rc < n && h[rc].before(&h[m]) {
				m = rc
			}
			if m == i {
				break
			}
			h[i], h[m] = h[m], h[i]
			i = m
		}
		r.late = h
		return top, true
	}
	if !inBuf || !(r.buf[r.head].start < w) {
		return pageSpan{}, false
	}
	r.head++
	return r.buf[r.head-1].pageSpan, true
}

// sweep flattens the states that start before w.
func (r *ganttRow) sweep(w float64, c *PageCollector) {
	for {
		s, ok := r.next(w)
		if !ok {
			break
		}
		r.push(s, c)
	}
	// Close the states that end by w: the spell forecaster is told of
	// each change before w (the segments are the same either way).
	r.advance(w, c)
	// Drop the swept states: when none is left, or once they are half of
	// buf (amortized O(1) per state).
	switch {
	case r.head == len(r.buf):
		r.buf, r.head = r.buf[:0], 0
	case r.head > 0 && 2*r.head >= len(r.buf):
		n := copy(r.buf, r.buf[r.head:])
		r.buf, r.head = r.buf[:n], 0
	}
}

// push is one step of the innermost flattening (the states in start
// order): the states that end by s's start close, those at s's level or
// above make way.
func (r *ganttRow) push(s pageSpan, c *PageCollector) {
	r.advance(s.start, c)
	for len(r.stack) > 0 && r.stack[len(r.stack)-1].imb >= s.imb {
		r.stack = r.stack[:len(r.stack)-1]
	}
	r.now = math.Max(r.now, s.start)
	r.stack = append(r.stack, s)
	if r.spell {
		c.spells.change(s.start, r.id, s.value)
	}
}

// advance closes the states that end by t.
func (r *ganttRow) advance(t float64, c *PageCollector) {
	for len(r.stack) > 0 {
		top := r.stack[len(r.stack)-1]
		e := math.Min(top.end, t)
		r.emit(math.Max(r.now, top.start), e, top.value, c)
		r.now = math.Max(r.now, e)
		if top.end > t {
			return
		}
		r.stack = r.stack[:len(r.stack)-1]
		if r.spell {
			v := int32(-1) // no state: the rules' Outside class
			if len(r.stack) > 0 {
				v = r.stack[len(r.stack)-1].value
			}
			c.spells.change(top.end, r.id, v)
		}
	}
}

// emit is a piece [a, b) of the innermost state (trace units): it goes on
// the last segment, or ends it.
func (r *ganttRow) emit(a, b float64, v int32, c *PageCollector) {
	if b <= a {
		return
	}
	if r.hasLast && r.last.value == v && r.last.end == a/c.perSec {
		r.last.end = b / c.perSec
		return
	}
	if r.hasLast {
		r.segment(r.last, c)
	}
	r.last, r.hasLast = seg{a / c.perSec, b / c.perSec, v}, true
}

// finish ends the flattening: the states still open close.
func (r *ganttRow) finish(c *PageCollector) {
	r.advance(math.Inf(1), c)
	if r.hasLast {
		r.segment(r.last, c)
		r.hasLast = false
	}
	if r.bin < len(r.bins) {
		r.endBin()
	}
}

// segment takes a final segment: kept while the page keeps them all, and
// added to the bins it covers (binDominant's coverage, bin by bin).
func (r *ganttRow) segment(s seg, c *PageCollector) {
	if c.exact {
		c.segs++
		if c.segs > c.o.MaxSegments {
			c.exact = false
			for _, row := range c.rows {
				row.segs = nil
			}
		} else {
			g0 := c.t0 / c.perSec
			r.segs = append(r.segs, round6(s.start-g0), round6(s.end-g0), float64(s.value))
		}
	}
	n := len(r.bins)
	if r.bin >= n || !(c.gw > 0) {
		return
	}
	lo := func(b int) float64 { return c.g0 + float64(b)*c.gw }
	// The first bin the segment is in: where s.start < the bin's end.
	b := max(r.bin, min(n-1, int((s.start-c.g0)/c.gw)))
	for b > r.bin && lo(b) > s.start {
		b--
	}
	for b < n && lo(b+1) <= s.start {
		b++
	}
	for ; b < n && lo(b) < s.end; b++ {
		for r.bin < b {
			r.endBin()
		}
		d := math.Min(s.end, lo(b+1)) - math.Max(s.start, lo(b))
		i := slices.IndexFunc(r.cover, func(vc valueCover) bool { return vc.v == s.value })
		if i < 0 {
			r.cover = append(r.cover, valueCover{v: s.value})
			i = len(r.cover) - 1
		}
		r.cover[i].d += d
	}
}

// endBin gives the bin being covered the value covering most of it (the
// smallest index among equals; −1 for none), and moves to the next.
func (r *ganttRow) endBin() {
	best, bestD := int32(-1), 0.0
	for _, vc := range r.cover {
		if vc.d > bestD || vc.d == bestD && vc.v < best {
			best, bestD = vc.v, vc.d
		}
	}
	r.bins[r.bin] = best
	r.cover = r.cover[:0]
	r.bin++
}
