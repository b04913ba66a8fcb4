package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/tracecast/tracecast"
	bf "github.com/tracecast/tracecast/backfill"
	"github.com/tracecast/tracecast/internal/runsort"
	stage "github.com/tracecast/tracecast/stages/backfill"
	"github.com/tracecast/tracecast/stages/signal"
)

// The spell forecasts over the Gantt chart: the forecaster `tracecast
// predict --spells` runs (package backfill's engine, fed as the backfill
// stage feeds it) issues, as each idle or busy spell of a worker starts,
// the median and 10% quantile of how long it will last; the page draws
// them over the Gantt chart against how long it lasted, and sums up, per
// worker, how often spells outlasted them (docs/report.md). It keeps what
// it draws at the page's resolution: every spell while there are at most
// maxSpellTicks, then per row and column (GanttBins/5 of them) the longest
// spell of each kind starting there; the calibration counts are per row.

// maxSpellRows is the most rows the page draws spells on: page.js draws
// them on rows at least 8 pixels high, and gives the Gantt 600 of them.
// Past it the page keeps the calibration counts only.
const maxSpellRows = 600 / 8

// maxSpellTicks bounds the spells drawn exactly (48 bytes each while
// reading, about 45 in the page), PageOptions.MaxSpells' default.
const maxSpellTicks = 10_000

type spellTick struct {
	start, end, q10, q50 float64 // seconds; q10, q50 from the spell's start (+Inf: beyond the model's range)
	row                  int32
	busy                 bool
}

// spellCal counts a row's spells and those that lasted at least the
// forecast q10 and q50, idle [0] and busy [1].
type spellCal struct {
	n, q10, q50 [2]int
}

type openSpell struct {
	start, q10, q50 float64
	busy, ok        bool
}

type spellTrack struct {
	eng    *bf.Engine
	t0     float64 // seconds
	end    float64 // the run's end, seconds
	perSec float64
	names  []string // the rows' names
	rowOf  map[string]int32
	rules  *signal.Rules
	c      *PageCollector
	open   []openSpell
	cal    []spellCal
	ticks  []spellTick // while exact
	max    int         // exact while at most max spells
	draw   bool        // the rows are few enough to draw the spells on
	exact  bool
	nb     int
	bw     float64
	bins   [][]spellTick // per row, column·2 + busy (end < start: none)
	closed bool

	// The changes of the rows' innermost state before the Gantt's
	// watermark, and the task counts read, not yet given to the engine;
	// last is the latest time given (seconds).
	events []spellEvent
	vars   []varChange
	// the sorts' scratch space
	evBuf  []spellEvent
	varBuf []varChange
	// frontier is, per task count, the end of its last piece read: its
	// changes before it are known (pieces come in order).
	frontier map[countVar]float64
	last     float64
	cls      []signal.Class // per row, its class now (as the events say)
	classOf  []int8         // per value index: its class, −1 not yet known

	// run runs a batch of the engine's work, and wait returns once every
	// batch given to run is done: by default at once, in the caller
	// (PageCollector.SpellsAsync). pool recycles the batches.
	run  func(func())
	wait func()
	pool chan []spellOp
}

// spellOp is one call of the engine, read off the events and the task
// counts by feed: in seconds, the names resolved, so that the engine can
// run on a goroutine of its own.
type spellOp struct {
	t             float64
	kind          uint8 // opChange, opReady, opSubmitted
	idle          bool
	n             int
	worker, value string
}

const (
	opChange uint8 = iota
	opReady
	opSubmitted
)

type spellEvent struct {
	t     float64 // trace units
	row   int32
	value int32 // −1: no state
}

// countVar is a task count: its container, and whether it is the
// submitted tasks' (else the ready tasks').
type countVar struct {
	container string
	submitted bool
}

// maxCountVars bounds the task counts the spell forecaster waits for.
const maxCountVars = 256

// maxHeldEvents bounds the changes held for a task count that stays put:
// past it the oldest go to the forecaster without waiting (16 bytes each).
const maxHeldEvents = 1 << 16

type varChange struct {
	t         float64 // trace units
	n         int
	submitted bool
}

// newSpellTrack follows the rows of c that are containers with states
// (those `tracecast backfill` counts) from t0 to end (seconds).
func newSpellTrack(c *PageCollector, stated map[string]struct{}, counts map[countVar]struct{}, t0, end float64) (*spellTrack, error) {
	rows := c.rowNames
	s := &spellTrack{t0: t0, end: end, perSec: c.perSec, names: rows, rules: c.rules, c: c, open: make([]openSpell, len(rows)), cal: make([]spellCal, len(rows)),
		exact: true, nb: max(1, c.o.GanttBins/5), max: c.o.MaxSpells, last: math.Inf(-1), draw: len(rows) <= maxSpellRows,
		run: func(f func()) { f() }, wait: func() {}, pool: make(chan []spellOp, 4)}
	s.bw = (end - t0) / float64(s.nb)
	s.frontier = make(map[countVar]float64, len(counts))
	for k := range counts {
		s.frontier[k] = math.Inf(-1)
	}
	s.cls = make([]signal.Class, len(rows))
	for i := range s.cls {
		s.cls[i] = c.rules.Outside
	}
	s.rowOf = make(map[string]int32, len(rows))
	for i, n := range rows {
		s.rowOf[n] = int32(i)
	}
	// Forecasts at each spell's start only (an Every beyond any run);
	// the length d does not matter (p is not drawn).
	eng, err := bf.New(bf.Config{Run: c.o.Title, Mode: bf.Wait, Alphas: []float64{1}, Policies: []string{bf.Never}, SpellLengths: []float64{1}, Every: 1e300},
		bf.Sink{Spell: s.issued, SpellEnd: s.ended, NoIDs: true})
	if err != nil {
		return nil, err
	}
	s.eng = eng
	workers := make([]string, 0, len(stated))
	for n := range stated {
		workers = append(workers, n)
	}
	slices.Sort(workers)
	eng.Begin(t0, workers, c.rules.Outside == signal.Idle)
	return s, nil
}

// change is a row's innermost state from t on (trace units; value −1:
// none), as the Gantt's flattening finds it: kept when its class changes,
// with the value that changed it (as signal.Live reports changes to the
// backfill feed).
func (s *spellTrack) change(t float64, row, value int32) {
	cl := s.rules.Outside
	if value >= 0 {
		cl = s.class(value)
	}
	if cl != s.cls[row] {
		s.cls[row] = cl
		s.events = append(s.events, spellEvent{t, row, value})
	}
}

// variable takes a task count's piece (StarPU's ready and submitted
// tasks), as the backfill feed reads them: from its start.
func (s *spellTrack) variable(e *tracecast.Entity) {
	if e.Type == stage.ReadyVariable || e.Type == stage.SubmittedVariable {
		s.vars = append(s.vars, varChange{e.Start, int(e.Number), e.Type == stage.SubmittedVariable})
		k := countVar{e.Container, e.Type == stage.SubmittedVariable}
		if f, ok := s.frontier[k]; ok {
			s.frontier[k] = math.Max(f, e.End)
		}
	}
}

// feed gives the engine the changes of the rows swept, in time order, each
// task count before the first change at or after its time, as the backfill
// feed does. That feed follows the input's watermark, which a state or
// variable of another type that stays put holds back (a variable set once
// at 4 ms held every worker state of the 41 MB StarPU trace until its
// end); the Gantt's flattening follows the selected states', and the
// changes wait until every task count (the survey's) has been read past
// them — but at most maxHeldEvents of them: past it, a count's piece
// still open is read when it ends, and given before the next change after
// that. final: the input ended, nothing waits.
func (s *spellTrack) feed(final bool) {
	// The rows' changes come row after row, each row's in time order.
	s.evBuf = runsort.Stable(s.events, func(a, b spellEvent) int { return cmp.Compare(a.t, b.t) }, s.evBuf)
	s.varBuf = runsort.Stable(s.vars, func(a, b varChange) int { return cmp.Compare(a.t, b.t) }, s.varBuf)
	n := len(s.events)
	if !final {
		f := math.Inf(1)
		for _, t := range s.frontier {
			f = math.Min(f, t)
		}
		n, _ = slices.BinarySearchFunc(s.events, f, func(e spellEvent, t float64) int { return cmp.Compare(e.t, t) })
		if len(s.events)-n > maxHeldEvents {
			n = len(s.events) - maxHeldEvents/2
		}
	}
	var ops []spellOp
	select {
	case ops = <-s.pool:
	default:
	}
	vi := 0
	for _, ev := range s.events[:n] {
		for vi < len(s.vars) && s.vars[vi].t <= ev.t {
			v := s.vars[vi]
			kind := opReady
			if v.submitted {
				kind = opSubmitted
			}
			ops = append(ops, spellOp{t: s.time(v.t), kind: kind, n: v.n})
			vi++
		}
		cl, value := s.rules.Outside, ""
		if ev.value >= 0 {
			cl, value = s.class(ev.value), s.c.names[ev.value]
		}
		ops = append(ops, spellOp{t: s.time(ev.t), kind: opChange, idle: cl == signal.Idle, worker: s.names[ev.row], value: value})
	}
	s.events = append(s.events[:0], s.events[n:]...)
	s.vars = append(s.vars[:0], s.vars[vi:]...)
	if len(ops) > 0 {
		s.run(func() { s.apply(ops) })
	}
}

// apply gives the engine a batch of calls, and the batch back to the pool.
func (s *spellTrack) apply(ops []spellOp) {
	for _, op := range ops {
		switch op.kind {
		case opReady:
			s.eng.Ready(op.t, op.n)
		case opSubmitted:
			s.eng.Submitted(op.t, op.n)
		default:
			s.eng.ChangeState(op.t, op.worker, op.idle, op.value)
		}
	}
	select {
	case s.pool <- ops[:0]:
	default:
	}
}

// class is a Gantt value's class.
func (s *spellTrack) class(v int32) signal.Class {
	for int(v) >= len(s.classOf) {
		s.classOf = append(s.classOf, -1)
	}
	if s.classOf[v] < 0 {
		cl, ok := s.c.folded[int(v)]
		if !ok {
			cl = s.rules.Classify(s.c.names[v])
		}
		s.classOf[v] = int8(cl)
	}
	return signal.Class(s.classOf[v])
}

// time converts trace units to seconds, never before the last time given.
func (s *spellTrack) time(t float64) float64 {
	t /= s.perSec
	if t < s.last {
		t = s.last
	}
	s.last = t
	return t
}

func (s *spellTrack) close() {
	if s.closed {
		return
	}
	s.closed = true
	s.feed(true)
	s.wait()
	s.eng.Finish(math.Max(s.last, s.end))
}

// issued takes a spell forecast: those at a spell's start are drawn.
func (s *spellTrack) issued(f tracecast.SpellForecast) {
	r, ok := s.rowOf[f.Worker]
	if !ok || f.Elapsed != 0 {
		return
	}
	s.open[r] = openSpell{start: f.IssuedAt, q10: f.Q10, q50: f.Q50, busy: f.State == "busy", ok: true}
}

// ended takes a spell that ended: it is counted, and kept for the chart.
func (s *spellTrack) ended(e bf.SpellEnd) {
	r, ok := s.rowOf[e.Worker]
	if !ok {
		return
	}
	o := s.open[r]
	s.open[r].ok = false
	if !o.ok || o.start != e.Start || o.busy != (e.State == "busy") || !(e.End > e.Start) {
		return
	}
	k := 0
	if o.busy {
		k = 1
	}
	c := &s.cal[r]
	length := e.End - e.Start
	c.n[k]++
	if length >= o.q10 {
		c.q10[k]++
	}
	if length >= o.q50 {
		c.q50[k]++
	}
	if !s.draw {
		return
	}
	t := spellTick{start: e.Start, end: e.End, q10: o.q10, q50: o.q50, row: r, busy: o.busy}
	if s.exact {
		if len(s.ticks) < s.max {
			s.ticks = append(s.ticks, t)
			return
		}
		s.exact = false
		s.bins = make([][]spellTick, len(s.open))
		for _, old := range s.ticks {
			s.bin(old)
		}
		s.ticks = nil
	}
	s.bin(t)
}

// bin keeps a spell if it is the longest of its kind starting in its
// column of its row.
func (s *spellTrack) bin(t spellTick) {
	row := s.bins[t.row]
	if row == nil {
		row = make([]spellTick, 2*s.nb)
		s.bins[t.row] = row
	}
	b := 0
	if s.bw > 0 {
		b = min(max(int((t.start-s.t0)/s.bw), 0), s.nb-1)
	}
	i := 2 * b
	if t.busy {
		i++
	}
	if row[i].end <= row[i].start || t.end-t.start > row[i].end-row[i].start {
		row[i] = t
	}
}

// spellsChart is what the page draws over the Gantt chart: per row, flat
// quintuples start, end (seconds from the Gantt's T0), q10 and q50 (seconds
// from the spell's start; −1 beyond the model's range), busy (1) or idle
// (0); Aggregated when each column keeps only its longest spell of each
// kind.
type spellsChart struct {
	Ticks      [][]float64 `json:"ticks"`
	Aggregated bool        `json:"aggregated"`
	// Undrawn: too many rows (maxSpellRows) to draw the spells on.
	Undrawn bool `json:"undrawn,omitempty"`
}

// spellsSection is the per-worker calibration table (not in DATA).
type spellsSection struct {
	Rows    []spellCalRow
	Omitted int // rows not listed (beyond maxCalRows)
}

type spellCalRow struct {
	Worker                  string
	IdleN, IdleQ10, IdleQ50 string
	BusyN, BusyQ10, BusyQ50 string
}

// maxCalRows bounds the calibration table's rows (all workers' row first).
const maxCalRows = 64

func (s *spellTrack) chart(rows int, g0 float64) spellsChart {
	ch := spellsChart{Ticks: make([][]float64, rows), Aggregated: !s.exact, Undrawn: !s.draw}
	for i := range ch.Ticks {
		ch.Ticks[i] = []float64{}
	}
	add := func(t spellTick) {
		q := func(x float64) float64 {
			if math.IsInf(x, 0) || math.IsNaN(x) {
				return -1
			}
			return round6(x)
		}
		b := 0.0
		if t.busy {
			b = 1
		}
		ch.Ticks[t.row] = append(ch.Ticks[t.row], round6(t.start-g0), round6(t.end-g0), q(t.q10), q(t.q50), b)
	}
	if s.exact {
		for _, t := range s.ticks {
			add(t)
		}
		return ch
	}
	for _, row := range s.bins {
		for _, t := range row {
			if t.end > t.start {
				add(t)
			}
		}
	}
	return ch
}

func (s *spellTrack) section(rows []string) *spellsSection {
	sec := &spellsSection{}
	share := func(k, n int) string {
		if n == 0 {
			return "–"
		}
		return fmt.Sprintf("%.3f", float64(k)/float64(n))
	}
	row := func(name string, c spellCal) spellCalRow {
		return spellCalRow{Worker: name, IdleN: fmt.Sprint(c.n[0]), IdleQ10: share(c.q10[0], c.n[0]), IdleQ50: share(c.q50[0], c.n[0]),
			BusyN: fmt.Sprint(c.n[1]), BusyQ10: share(c.q10[1], c.n[1]), BusyQ50: share(c.q50[1], c.n[1])}
	}
	var all spellCal
	for _, c := range s.cal {
		for k := range 2 {
			all.n[k] += c.n[k]
			all.q10[k] += c.q10[k]
			all.q50[k] += c.q50[k]
		}
	}
	sec.Rows = append(sec.Rows, row("all workers", all))
	for i, n := range rows {
		if i >= maxCalRows {
			sec.Omitted = len(rows) - i
			break
		}
		sec.Rows = append(sec.Rows, row(n, s.cal[i]))
	}
	return sec
}
