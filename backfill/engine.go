package backfill

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/forecast/spell"
)

// Sink receives what an Engine produces, as it is produced.
type Sink struct {
	// Decision is called once a decision's outcome is known.
	Decision func(tracecast.Decision)
	// Spell is called with each spell forecast (Config.SpellLengths):
	// idle spells', and busy spells' (State "busy") when not a gang.
	Spell func(tracecast.SpellForecast)
	// NoIDs: Spell's records come without their ID (a sink that keeps
	// none, as the report's: the IDs were half the engine's allocations).
	NoIDs bool
	// SpellEnd is called as a spell with forecasts (of positive length)
	// ends: the report draws each spell's forecast against it.
	SpellEnd func(SpellEnd)
	// Launch is called as a task is launched (its decision comes once its
	// outcome is known): a closed loop that runs the primary needs to know
	// at once that Worker is held until End.
	Launch func(Launch)
	// Plan is called with the forecast policy's plans (not for gangs):
	// when an idle worker's launch windows change, and when its spell
	// ends (tracecast.Plan).
	Plan func(tracecast.Plan)
}

// Launch is a task as it is launched: on Worker (the aggregate's name for
// a gang) from Start to End (its set-up and work), by Policy for length D
// (Alpha, Timeout: NaN when the policy has none).
type Launch struct {
	Policy, Worker string
	Start, End, D  float64
	Alpha, Timeout float64
}

// SpellEnd is a worker's idle or busy spell that ended, from Start to End.
type SpellEnd struct {
	Worker, State string
	Start, End    float64
}

// lane is one policy for one task length (and α, τ): its totals.
type lane struct {
	policy      string
	alpha, tau  float64 // NaN when the policy has none
	d, c        float64 // c = o + d
	di, ai      int     // indexes of d and α in the config
	quiet       bool    // run for the table only (greedy, S_ref): no decisions out
	id          string  // its decisions' id prefix
	launches    int
	completed   int
	u, w, delay float64
	seq         int64
	plans       int64 // plan records issued
}

// laneState is a lane's state on one worker.
type laneState struct {
	running          bool
	taskStart, until float64 // the running task's start and start + c
	workers          []byte  // a gang task's workers (a JSON list)
	p                float64 // the p the running task was launched on
	overran          bool
	plan             float64 // next launch time
	planP            float64
	planKey          uint16
	// pub holds the launch windows last published (Sink.Plan) in this
	// spell; published says whether any were.
	pub       [gridWords]uint64
	published bool
}

type worker struct {
	name  string
	gang  bool // the aggregate [X ≥ K] of Config.Gang, not a container
	idle  bool
	start float64 // the spell's start
	// strata is the worker's stratum at each landmark of its spell passed.
	strata   []uint16
	nextTick float64 // next spell forecast
	// tick and busyTickN are the index in the spell of the next idle and
	// busy forecast (the forecasts' cache key, tickKey).
	tick, busyTickN int
	lanes           []laneState
	spells          []float64 // start, end pairs (KeepSpells)
	next            float64   // min over lanes of their next action
	// The busy spell (not idle), when busy forecasts are issued: since
	// when, its stratum (the state it began in) and its next forecast.
	busy      bool
	busyStart float64
	// kind is the idle spell's kind: the state value it began in (an MPI
	// call), a stratum where the trace has no task counts.
	kind     uint16
	busyKey  uint16
	busyTick float64
	// The forecasts of the open idle and busy spells whose q10 outcome
	// is not known yet (calib).
	openQ, busyOpenQ openQ
	// pending is the change at the engine's instant (hasPending), applied
	// once time moves on; dirtyAll: every lane plans again.
	pending                      pendingChange
	hasPending, dirtyAll, marked bool // marked: in Engine.dirty
}

// Engine runs the policies on the class changes of one run.
type Engine struct {
	cfg     Config
	sink    Sink
	lanes   []*lane
	workers map[string]*worker
	order   []*worker // by name
	idleN   int
	ready   int
	// submitted is the tasks submitted and not completed (−1: unknown).
	submitted int
	model     *spell.Model
	now       float64
	started   bool
	dirty     []*worker
	// pendingOrder are the workers with a change at e.now (worker.pending),
	// applied once time moves on.
	pendingOrder []*worker
	// dirtyAllList are the dirty workers whose every lane plans again
	// (worker.dirtyAll; else only those whose plan reads the features:
	// forecast). Fields, not maps: clearing a map at every instant costs
	// its buckets (6% of the engine's time in the report).
	dirtyAllList []*worker
	plans        map[planKey]*planCache
	version      int // the model's epoch the plans were made in
	// otScore[di][ai][k] is the score timeout TauGrid[k] would have made
	// on the completed spells (online-timeout's choice).
	otScore     [][][]float64
	longest     float64
	idleSum     float64 // idle worker-seconds of the completed spells
	spellsN     int
	ended       bool
	scorer      *spellScorer               // the spell forecasts' scores (offline)
	ticks       map[tickKey]*spellForecast // the idle spells' forecasts kept (forecastAt)
	spellLabels []string                   // the spell lengths' labels (ids)
	idBuf       []byte
	ids         []string      // an issue's record ids, slices of one string
	idEnds      []int         // where each ends in it
	scratch     spellForecast // forecastAt's, when not kept
	issues      int64         // spell forecast issues so far (their ids' N)
	// gang is the aggregate worker of Config.Gang ≥ 2: the policies run on
	// it alone, its spells those of [X ≥ K] (X the idle workers).
	gang *worker
	// The busy spells' forecaster (busyOn): its model, strata (the state
	// values busy spells begin in, at most maxBusyStrata), scorer and
	// forecasts kept.
	busyModel  *spell.Model
	busyKeys   map[string]uint16
	busyScorer *spellScorer
	busyTicks  map[tickKey]*spellForecast
	idleKinds  map[string]uint16
	// cal and busyCal are the levels of the idle and busy spells' q10.
	cal, busyCal *calib
}

// kindOf is the idle kind of a state value: 1 to spell.MaxKinds in the
// order first seen, 0 for "" and the later ones.
func (e *Engine) kindOf(value string) uint16 {
	if value == "" {
		return 0
	}
	if k, ok := e.idleKinds[value]; ok {
		return k
	}
	if e.idleKinds == nil {
		e.idleKinds = map[string]uint16{}
	}
	if len(e.idleKinds) >= spell.MaxKinds {
		return 0
	}
	k := uint16(len(e.idleKinds) + 1)
	e.idleKinds[value] = k
	return k
}

type pendingChange struct {
	idle  bool
	value string
}

// maxBusyStrata bounds the busy model's strata (a stratum's histograms
// take 77 KB): the state values after them share stratum 0 with the
// unknown ones.
const maxBusyStrata = 64

// busyScale is the busy model's time unit, 10 ns: its histograms resolve
// 1 µs to 10⁴ s of their unit, 10 ns to 100 s. A StarPU worker's busy
// spells include its data transfers (FetchingInput, PushingOutput) of a
// fraction of a microsecond, which the idle spells' 1 µs resolution
// forecast as 0 (R ≥ q50 then held for 85% of the 12-CPU Cholesky run's
// busy spells at their start).
const busyScale = 100

// New checks the configuration and returns an Engine.
func New(cfg Config, sink Sink) (*Engine, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	e := &Engine{cfg: cfg, sink: sink, workers: map[string]*worker{},
		model: spell.New(), cal: newCalib(), busyCal: newCalib(), ready: -1, submitted: -1, now: math.Inf(-1), plans: map[planKey]*planCache{}}
	nan := math.NaN()
	has := func(p string) bool { return slices.Contains(e.cfg.Policies, p) }
	for di, d := range cfg.Tasks {
		add := func(p string, alpha, tau float64, ai int) {
			e.lanes = append(e.lanes, &lane{policy: p, alpha: alpha, tau: tau, d: d, c: d + cfg.Overhead, di: di, ai: ai})
		}
		add(Greedy, nan, nan, -1) // always: S_ref needs it
		e.lanes[len(e.lanes)-1].quiet = !has(Greedy)
		if has(Timeout) {
			for _, t := range cfg.Timeouts {
				add(Timeout, nan, t, -1)
			}
		}
		for ai, a := range cfg.Alphas {
			for _, p := range []string{OnlineTimeout, Residual, Forecast} {
				if has(p) {
					add(p, a, nan, ai)
				}
			}
		}
	}
	e.ticks = map[tickKey]*spellForecast{}
	for _, d := range cfg.SpellLengths {
		e.spellLabels = append(e.spellLabels, label(d))
	}
	if cfg.Gang >= 2 {
		e.gang = e.newWorker(fmt.Sprintf("idle>=%d", cfg.Gang))
		e.gang.gang = true
	}
	if cfg.KeepSpells && len(cfg.SpellLengths) > 0 {
		e.scorer = newSpellScorer(cfg.SpellLengths)
	}
	if e.busyOn() {
		e.busyModel, e.busyKeys, e.busyTicks = spell.New(), map[string]uint16{"": 0}, map[tickKey]*spellForecast{}
		if cfg.KeepSpells {
			e.busyScorer = newSpellScorer(cfg.SpellLengths)
		}
	}
	e.otScore = make([][][]float64, len(cfg.Tasks))
	for di := range cfg.Tasks {
		e.otScore[di] = make([][]float64, len(cfg.Alphas))
		for ai := range cfg.Alphas {
			e.otScore[di][ai] = make([]float64, len(TauGrid))
		}
	}
	return e, nil
}

// Begin starts the run at t0 with the workers known in advance (a first
// pass over a file): each is in the rules' no-state class from t0 on, idle
// when idleOutside. Without Begin a worker counts from its first change.
func (e *Engine) Begin(t0 float64, workers []string, idleOutside bool) {
	e.started, e.now = true, t0
	for _, n := range workers {
		w := e.worker(n)
		if idleOutside {
			e.setIdle(w, t0, true, "")
		} else {
			e.startBusy(w, t0, "")
		}
	}
	e.updateGang()
}

func (e *Engine) newWorker(name string) *worker {
	w := &worker{name: name, lanes: make([]laneState, len(e.lanes)), next: math.Inf(1)}
	for i := range w.lanes {
		w.lanes[i].plan = math.Inf(1)
	}
	return w
}

// active are the workers the policies run on: the selected workers, or
// the gang's aggregate.
func (e *Engine) active() []*worker {
	if e.gang != nil {
		return []*worker{e.gang}
	}
	return e.order
}

// updateGang starts or ends the aggregate's spell when the idle workers
// reach K or fall below it.
func (e *Engine) updateGang() {
	if e.gang == nil {
		return
	}
	if idle := e.idleN >= e.cfg.Gang; idle != e.gang.idle {
		e.setIdle(e.gang, e.now, idle, "")
	}
}

func (e *Engine) worker(name string) *worker {
	w := e.workers[name]
	if w == nil {
		w = e.newWorker(name)
		e.workers[name] = w
		i, _ := slices.BinarySearchFunc(e.order, name, func(a *worker, n string) int {
			switch {
			case a.name < n:
				return -1
			case a.name > n:
				return 1
			}
			return 0
		})
		e.order = slices.Insert(e.order, i, w)
		e.markAllIdle() // the share of workers idle changed
	}
	return w
}

// Submitted records the number of tasks submitted and not completed from
// t on.
func (e *Engine) Submitted(t float64, n int) {
	e.advance(t)
	e.submitted = n
	e.markAllIdle()
}

// Ready records the number of ready tasks from t on.
func (e *Engine) Ready(t float64, n int) {
	e.advance(t)
	e.ready = n
	e.markAllIdle()
}

// Change records that a worker is idle or not from t on. Changes come in
// time order.
func (e *Engine) Change(t float64, name string, idle bool) { e.ChangeState(t, name, idle, "") }

// ChangeState is Change with the worker's state value from t on (its
// innermost state: a codelet, an MPI call; "" unknown), which the busy
// spells' forecasts are conditioned on.
func (e *Engine) ChangeState(t float64, name string, idle bool, value string) {
	if !e.started {
		e.started, e.now = true, t
	}
	e.advance(t)
	w := e.worker(name)
	if !w.hasPending {
		w.hasPending = true
		e.pendingOrder = append(e.pendingOrder, w)
	}
	w.pending = pendingChange{idle, value}
}

// flush applies the changes of the instant e.now: only where a worker ends
// up matters (a rank idle in MPI_Recv, in a send of no duration, then in
// MPI_Recv again at the same instant stays in one spell: its class is idle
// throughout every interval of positive length).
func (e *Engine) flush() {
	for _, w := range e.pendingOrder {
		w.hasPending = false
		e.setIdle(w, e.now, w.pending.idle, w.pending.value)
	}
	e.pendingOrder = e.pendingOrder[:0]
	e.updateGang()
}

func (e *Engine) setIdle(w *worker, t float64, idle bool, value string) {
	switch {
	case idle && !w.idle:
		e.endBusy(w, t)
		w.idle, w.start, w.strata = true, t, w.strata[:0]
		w.kind = e.kindOf(value)
		w.nextTick, w.tick = t, 0
		if !w.gang {
			e.idleN++
		}
		e.markAllIdle() // the share of idle workers changed
		e.setDirtyAll(w)
	case !idle && w.idle:
		if e.gang == nil || w.gang {
			e.endSpell(w, t)
		} else {
			w.idle = false // a member of the aggregate: no spell of its own
		}
		if !w.gang {
			e.idleN--
		}
		e.markAllIdle()
		e.startBusy(w, t, value)
	case !idle && !w.busy:
		e.startBusy(w, t, value) // a worker's first state, not idle
	}
}

// busyOn says whether busy spells are forecast: spell forecasts asked,
// each worker on its own (not a gang).
func (e *Engine) busyOn() bool { return len(e.cfg.SpellLengths) > 0 && e.cfg.Gang < 2 }

// startBusy starts worker w's busy spell at t, in the state value.
func (e *Engine) startBusy(w *worker, t float64, value string) {
	if e.busyModel == nil || w.gang || w.busy {
		return
	}
	key, ok := e.busyKeys[value]
	if !ok && len(e.busyKeys) < maxBusyStrata {
		key = uint16(len(e.busyKeys))
		e.busyKeys[value] = key
	}
	w.busy, w.busyStart, w.busyKey, w.busyTick, w.busyTickN = true, t, key, t, 0
}

// endBusy ends worker w's busy spell at t: the busy model learns it.
func (e *Engine) endBusy(w *worker, t float64) {
	if !w.busy {
		return
	}
	w.busy = false
	length := t - w.busyStart
	e.busyCal.resolve(&w.busyOpenQ, t)
	if e.busyScorer != nil {
		e.busyScorer.end(w.name, t, length)
	}
	if length > 0 {
		e.busyModel.ObserveIn(length*busyScale, w.busyKey)
		if e.sink.SpellEnd != nil {
			e.sink.SpellEnd(SpellEnd{Worker: w.name, State: "busy", Start: w.busyStart, End: t})
		}
	}
}

// setDirtyAll has every lane of w plan again at the next advance.
func (e *Engine) setDirtyAll(w *worker) {
	if !w.dirtyAll {
		w.dirtyAll = true
		e.dirtyAllList = append(e.dirtyAllList, w)
	}
}

func (e *Engine) mark(w *worker) {
	if !w.marked {
		w.marked = true
		e.dirty = append(e.dirty, w)
	}
}

// markAllIdle marks every idle worker for a new plan (a feature every
// stratum reads changed). Only the forecast lanes' plans depend on it.
func (e *Engine) markAllIdle() {
	for _, w := range e.active() {
		if w.idle {
			e.mark(w)
		}
	}
}

func (e *Engine) features(w *worker) spell.Features {
	f := spell.Features{Ready: e.ready, Idle: e.idleN, Workers: len(e.order), Waiting: -1}
	if e.ready < 0 && e.submitted < 0 {
		f.Kind = w.kind
	}
	if e.submitted >= 0 {
		f.Waiting = e.submitted - (len(e.order) - e.idleN) // not running: ready or blocked
	}
	return f
}

// record notes the stratum of every idle worker at the landmarks of its
// spell before t (the features have not changed since the last event).
func (e *Engine) record(t float64) {
	for _, w := range e.active() {
		if !w.idle {
			continue
		}
		var key uint16
		keyed := false
		for j := len(w.strata); w.start+spell.Landmark(j) < t; j++ {
			if !keyed {
				key, keyed = e.features(w).Stratum(), true
			}
			w.strata = append(w.strata, key)
			if j+1 >= spell.NumLandmarks {
				break
			}
		}
	}
}

// endSpell closes a worker's spell at t: its lanes' running tasks are
// killed or overrun, and the model learns the spell.
func (e *Engine) endSpell(w *worker, t float64) {
	w.idle = false
	length := t - w.start
	for i, l := range e.lanes {
		ls := &w.lanes[i]
		ls.plan = math.Inf(1)
		if ls.published {
			ls.published = false
			e.sendPlan(w, l, t, "busy", nil)
		}
		if !ls.running || ls.until <= t+timeEps || ls.overran {
			continue // an overrun counts once, against its own spell
		}
		if e.cfg.Mode == Kill {
			l.w += t - ls.taskStart
			ls.running = false
			e.decide(w, l, ls, "killed")
		} else {
			l.delay += ls.until - t
			ls.overran = true
		}
	}
	e.updateNext(w)
	e.cal.resolve(&w.openQ, t)
	if e.scorer != nil {
		e.scorer.end(w.name, t, length)
	}
	if !(length > 0) {
		return
	}
	if e.sink.SpellEnd != nil && len(e.cfg.SpellLengths) > 0 {
		e.sink.SpellEnd(SpellEnd{Worker: w.name, State: "idle", Start: w.start, End: t})
	}
	if e.cfg.KeepSpells && len(e.cfg.Tasks) > 0 {
		// For the oracle and the hindsight timeout: 16 bytes a spell,
		// kept only when there are tasks to place (predict --spells
		// scores forecasts alone, in memory flat in the trace).
		w.spells = append(w.spells, w.start, t)
	}
	e.spellsN++
	e.idleSum += length
	e.longest = math.Max(e.longest, length)
	e.model.Observe(length, w.strata)
	for di, d := range e.cfg.Tasks {
		c := d + e.cfg.Overhead
		for ai, a := range e.cfg.Alphas {
			sc := e.otScore[di][ai]
			for k, tau := range TauGrid {
				if tau >= length {
					break
				}
				sc[k] += spellScore(length-tau, d, c, a, e.cfg.Mode)
			}
		}
	}
}

// spellScore is what back-to-back tasks launched at the start of r seconds
// of idle make: n completed, the last killed (kill) or overrunning (wait).
func spellScore(r, d, c, alpha float64, m Mode) float64 {
	n := math.Floor(r / c)
	if m == Kill {
		return n*d - alpha*(r-n*c)
	}
	if n*c < r {
		n++
	}
	return n*d - alpha*(n*c-r)
}

// decide emits a decision whose outcome is known.
func (e *Engine) decide(w *worker, l *lane, ls *laneState, outcome string) {
	l.launches++
	if e.sink.Decision == nil || l.quiet {
		return
	}
	l.seq++
	d := e.decision(l, w.name, ls.taskStart, ls.p, outcome, l.tau)
	if w.gang {
		d.Worker, d.Workers = "", ls.workers
	}
	e.sink.Decision(d)
}

func (e *Engine) decision(l *lane, worker string, start, p float64, outcome string, tau float64) tracecast.Decision {
	if l.id == "" || l.policy == HindsightTimeout {
		l.id = fmt.Sprintf("%s/%s/%s", e.cfg.Run, l.policy, label(l.d))
		if !math.IsNaN(l.alpha) {
			l.id += "/a" + fmt.Sprint(l.alpha)
		}
		if l.policy == Timeout {
			l.id += "/t" + label(tau)
		}
		l.id += "/"
	}
	return tracecast.Decision{ID: l.id + strconv.FormatInt(l.seq, 10), Policy: l.policy, Run: e.cfg.Run, Worker: worker,
		Start: start, D: l.d, Overhead: e.cfg.Overhead, Mode: string(e.cfg.Mode), Alpha: l.alpha, Timeout: tau, Outcome: outcome, P: p}
}

func (e *Engine) updateNext(w *worker) {
	n := math.Inf(1)
	if w.idle {
		n = w.nextTick
	}
	for i := range w.lanes {
		ls := &w.lanes[i]
		if ls.running {
			n = math.Min(n, ls.until)
		} else {
			n = math.Min(n, ls.plan)
		}
	}
	w.next = n
}

// advance settles the instant e.now (new plans for the workers whose state
// changed) and runs every launch, completion and reconsideration before t.
func (e *Engine) advance(t float64) {
	if e.ended {
		panic("backfill: change after Finish")
	}
	if t < e.now {
		t = e.now // a late change counts at the latest time seen
	}
	if t > e.now {
		e.flush()
	}
	if v := e.model.Version(); v != e.version {
		e.version = v // the plans read the model: plan again
		for _, w := range e.active() {
			if w.idle {
				e.setDirtyAll(w)
				e.mark(w)
			}
		}
	}
	for _, w := range e.dirty {
		if w.idle && (e.gang == nil || w.gang) {
			all := w.dirtyAll
			for i, l := range e.lanes {
				if l.policy == Forecast {
					e.publishPlan(w, i)
				}
				if !w.lanes[i].running && (all || l.policy == Forecast && w.lanes[i].planKey != e.features(w).Stratum()) {
					e.plan(w, i, e.now)
				}
			}
		}
		e.updateNext(w)
	}
	for _, w := range e.dirty {
		w.marked = false
	}
	e.dirty = e.dirty[:0]
	for _, w := range e.dirtyAllList {
		w.dirtyAll = false
	}
	e.dirtyAllList = e.dirtyAllList[:0]
	if !(t > e.now) {
		return
	}
	e.record(t)
	for _, w := range e.active() {
		if w.next < t {
			e.run(w, t)
		}
		for w.busy && w.busyTick < t {
			e.issueBusy(w, w.busyTick)
		}
	}
	e.now = t
}

// issueBusy issues the busy spell forecasts of worker w at t, and sets the
// next: at elapsed Every, then each time the elapsed time doubles (a long
// task's forecast is updated; a busy worker does not issue one record per
// Every of every task).
func (e *Engine) issueBusy(w *worker, t float64) {
	elapsed := t - w.busyStart
	k := w.busyTickN
	w.busyTickN++
	w.busyTick = w.busyStart + math.Max(e.cfg.Every, 2*elapsed)
	if w.busyTick <= t { // a spell so long that the sum rounds to t
		w.busyTick = math.Nextafter(t, math.Inf(1))
	}
	if e.sink.Spell == nil && e.busyScorer == nil {
		return
	}
	nominal := 0.0
	if k > 0 {
		nominal = e.cfg.Every * math.Exp2(float64(k-1))
	}
	f := e.forecastAt(e.busyModel, e.busyTicks, e.busyCal, busyScale, elapsed, nominal, w.busyKey, k)
	w.busyOpenQ.keep(t, f.q10, elapsed == 0)
	e.publishSpell(w, t, elapsed, f, "busy", e.busyScorer)
}

// run carries a worker's lanes and spell forecasts up to (not including)
// t; its idle state does not change before t.
func (e *Engine) run(w *worker, t float64) {
	for w.idle && w.nextTick < t {
		e.issueSpells(w, w.nextTick)
		w.nextTick += e.cfg.Every
	}
	for i, l := range e.lanes {
		ls := &w.lanes[i]
		for {
			if ls.running {
				// A task ending at t, the spell's end, completed (a+o+d ≤ e).
				if ls.until > t+timeEps {
					break
				}
				ls.running = false
				if ls.overran {
					e.decide(w, l, ls, "overran")
				} else {
					e.decide(w, l, ls, "completed")
				}
				l.u += l.d
				l.completed++
				if !w.idle {
					break
				}
				e.plan(w, i, ls.until)
				continue
			}
			if !(ls.plan < t-timeEps) {
				break
			}
			ls.running, ls.overran, ls.taskStart, ls.until, ls.p = true, false, ls.plan, ls.plan+l.c, ls.planP
			if w.gang {
				ls.workers = e.gangWorkers()
			}
			if e.sink.Launch != nil && !l.quiet {
				e.sink.Launch(Launch{Policy: l.policy, Worker: w.name, Start: ls.taskStart, End: ls.until, D: l.d, Alpha: l.alpha, Timeout: l.tau})
			}
			ls.plan = math.Inf(1)
		}
	}
	e.updateNext(w)
}

// gangWorkers names the K workers a gang task takes: the idle ones idle
// the longest (then by name), as a JSON list.
func (e *Engine) gangWorkers() []byte {
	var idle []*worker
	for _, w := range e.order {
		if w.idle {
			idle = append(idle, w)
		}
	}
	slices.SortStableFunc(idle, func(a, b *worker) int {
		switch {
		case a.start < b.start:
			return -1
		case a.start > b.start:
			return 1
		}
		return 0
	})
	names := make([]string, 0, e.cfg.Gang)
	for _, w := range idle[:min(len(idle), e.cfg.Gang)] {
		names = append(names, w.name)
	}
	b, _ := json.Marshal(names)
	return b
}

// issueSpells issues the spell forecasts of an idle worker at t.
func (e *Engine) issueSpells(w *worker, t float64) {
	if e.sink.Spell == nil && e.scorer == nil || len(e.cfg.SpellLengths) == 0 {
		return
	}
	elapsed := t - w.start
	k := w.tick
	w.tick++
	f := e.forecastAt(e.model, e.ticks, e.cal, 1, elapsed, float64(k)*e.cfg.Every, e.features(w).Stratum(), k)
	w.openQ.keep(t, f.q10, elapsed == 0)
	e.publishSpell(w, t, elapsed, f, "idle", e.scorer)
}

// publishSpell scores and publishes one issue's forecasts, a record per
// length d.
func (e *Engine) publishSpell(w *worker, t, elapsed float64, f *spellForecast, state string, scorer *spellScorer) {
	e.issues++
	if e.sink.Spell != nil {
		// The issue's ids, RUN/WORKER/D/N, written one after the other
		// into one string: one allocation an issue, not one a record.
		e.idBuf, e.ids, e.idEnds = e.idBuf[:0], e.ids[:0], e.idEnds[:0]
		for i := range e.cfg.SpellLengths {
			e.ids = append(e.ids, "")
			if e.sink.NoIDs {
				continue
			}
			e.idBuf = append(append(append(append(append(e.idBuf, e.cfg.Run...), '/'), w.name...), '/'), e.spellLabels[i]...)
			e.idBuf = strconv.AppendInt(append(e.idBuf, '/'), e.issues, 10)
			e.idEnds = append(e.idEnds, len(e.idBuf))
		}
		all, start := string(e.idBuf), 0
		for i, end := range e.idEnds {
			e.ids[i] = all[start:end]
			start = end
		}
	}
	for i, d := range e.cfg.SpellLengths {
		p := f.p[i]
		if scorer != nil {
			scorer.issue(w.name, t, elapsed, i, p, f.q10, f.q50)
		}
		if e.sink.Spell == nil {
			continue
		}
		e.sink.Spell(tracecast.SpellForecast{
			ID:  e.ids[i],
			Run: e.cfg.Run, Worker: w.name, State: state, IssuedAt: t, Elapsed: elapsed, D: d,
			P: p, Q10: f.q10, Q50: f.q50, Method: "spell"})
	}
}

// spellForecast is what a spell forecast says for the lengths asked.
type spellForecast struct {
	version  int
	level    float64 // q10's (calib)
	p        []float64
	q10, q50 float64
	median   float64 // the model's
}

// sort publishes the model's quantile at q10's calibrated level as q10,
// and its median as q50 but never below q10: where the level has passed
// 0.5 the spells outlast the model's median nine times in ten at that
// age, so their median is at least the 10% quantile (and two bisections
// to within 0.1% of a flat survival can cross). Measured on the ten
// traces of docs/backfill.md and six held out: the level bounded by 0.5
// instead (q10 at most the median) left bench2b's p2p-i-la-1 at 0.831;
// sorting the two (rearrangement) did the same; this, 0.914.
func (f *spellForecast) sort(atLevel, median float64) {
	f.q10, f.q50 = atLevel, max(atLevel, median)
}

// tickKey names a forecast kept for the model's epoch: its stratum and
// its index k in the spell (issued at elapsed k·Every when idle; at 0 and
// Every·2^(k−1) when busy). Most forecasts are issued at a few elapsed
// times, the spell's start above all: two quantiles cost thirty
// histogram reads, a map read one.
type tickKey struct {
	stratum uint16
	k       uint16
}

// maxTicksKept bounds a cache of forecasts (they are forgotten all at once
// past it: 16 384 of about 100 bytes), and maxTickIndex the index in a
// spell of those it keeps (a spell's later ones are computed each time).
const (
	maxTicksKept = 1 << 14
	maxTickIndex = 1 << 10
)

// forecastAt forecasts a spell of age elapsed in stratum key, issued k-th
// in it, for a model whose times are scale × seconds, its cache of
// forecasts and its q10's level (the idle or the busy spells'). The
// forecast is that of the nominal age: elapsed is it but for the rounding
// of the issue times (a sum of start and age); when it is not, elapsed's
// own forecast, not kept.
func (e *Engine) forecastAt(m *spell.Model, kept map[tickKey]*spellForecast, cal *calib, scale, elapsed, nominal float64, key uint16, k int) *spellForecast {
	level := cal.level(k == 0)
	tk := tickKey{key, uint16(k)}
	keep := k < maxTickIndex && math.Abs(elapsed-nominal) <= 1e-9*nominal
	if keep {
		elapsed = nominal
		if f := kept[tk]; f != nil && f.version == m.Version() {
			if f.level != level {
				f.level = level
				f.sort(m.Predict(elapsed*scale, key).Quantile(level)/scale, f.median)
			}
			return f
		}
	}
	dist := m.Predict(elapsed*scale, key)
	// One not kept is used once, by the caller, before the next: it goes
	// in the scratch one.
	f := &e.scratch
	if keep {
		if f = kept[tk]; f == nil { // else one of an older epoch, renewed
			if len(kept) >= maxTicksKept {
				clear(kept)
			}
			f = &spellForecast{}
			kept[tk] = f
		}
	}
	f.version, f.level = m.Version(), level
	f.median = dist.Quantile(0.5) / scale
	f.sort(dist.Quantile(level)/scale, f.median)
	f.p = append(f.p[:0], make([]float64, len(e.cfg.SpellLengths))...)
	for i, d := range e.cfg.SpellLengths {
		f.p[i] = dist.Survival(d * scale)
	}
	return f
}

// plan sets lane i's next launch on idle worker w from time now on.
func (e *Engine) plan(w *worker, i int, now float64) {
	l, ls := e.lanes[i], &w.lanes[i]
	ls.plan, ls.planP = math.Inf(1), math.NaN()
	x := now - w.start
	switch l.policy {
	case Greedy:
		ls.plan = now
	case Timeout:
		ls.plan = after(now, w.start, l.tau)
	case OnlineTimeout:
		if e.spellsN == 0 {
			return
		}
		sc := e.otScore[l.di][l.ai]
		best := 0
		for k := range sc {
			if sc[k] > sc[best] {
				best = k
			}
		}
		if sc[best] <= 0 {
			return // never launching was as good
		}
		ls.plan = after(now, w.start, TauGrid[best])
	case Residual, Forecast:
		if l.policy == Residual && e.spellsN == 0 {
			return
		}
		key := residualKey
		if l.policy == Forecast {
			key = e.features(w).Stratum()
		}
		ls.planKey = key
		pc := e.planCache(key, i)
		k := gridIndex(x)
		if pc.launch(k) {
			ls.plan, ls.planP = now, pc.p[k]
			return
		}
		if k = int(pc.next[k]); k < len(planGrid) {
			ls.plan, ls.planP = w.start+planGrid[k], pc.p[k]
		}
	}
}

// residualKey is the residual policy's plan cache key (no stratum).
const residualKey uint16 = math.MaxUint16

// planGrid is the elapsed idle times at which the residual and forecast
// policies may launch: 0, then gridPerDecade per decade from 1 µs to 10⁴ s
// (within an interval of the grid the decision is that of its left end).
var planGrid = func() []float64 {
	g := []float64{0}
	for k := 0; k <= 10*gridPerDecade; k++ {
		g = append(g, 1e-6*math.Pow(10, float64(k)/gridPerDecade))
	}
	return g
}()

// gridPerDecade is the launch grid's density (an interval is 1.45% of
// its left end: 1 ms at 70 ms); gridLen its points, gridWords the 64-bit
// words of a plan's launch bits. Between two points the decision is the
// left one's, so the grid is what a decision resolves: with ten per
// decade (an interval 26% of its left end) the back-to-back tasks of an
// SMPI rank's 71.5 ms spells were launched up to 79 ms by the decision
// at 63 ms, and overran as greedy's did (docs/backfill.md).
const (
	gridPerDecade = 160
	gridLen       = 2 + 10*gridPerDecade
	gridWords     = (gridLen + 63) / 64
)

// gridIndex is the largest k with planGrid[k] ≤ x.
func gridIndex(x float64) int {
	k, _ := slices.BinarySearch(planGrid, x)
	if k == len(planGrid) || planGrid[k] > x {
		k--
	}
	return max(k, 0)
}

// planCache holds a policy's decisions at the grid's points for one
// stratum, computed when first needed in a model epoch.
type planCache struct {
	version int
	lane    *lane
	key     uint16
	pos     [gridWords]uint64 // launch at planGrid[k]
	// next[k] is the first k' > k where the policy launches
	// (len(planGrid): none).
	next [gridLen]uint16
	p    [gridLen]float64
}

type planKey struct {
	key  uint16
	lane int
}

func (e *Engine) planCache(key uint16, i int) *planCache {
	pc := e.plans[planKey{key, i}]
	if pc == nil {
		pc = &planCache{lane: e.lanes[i], key: key, version: -1}
		e.plans[planKey{key, i}] = pc
	}
	if v := e.model.Version(); pc.version != v {
		pc.version, pc.pos = v, [gridWords]uint64{}
		if pc.lane.policy == Forecast {
			pc.solve(e)
		} else {
			l := pc.lane
			for k, x := range planGrid {
				if pc.p[k] = e.model.Residual(x, l.c); pc.p[k] >= l.alpha/(1+l.alpha) {
					pc.pos[k/64] |= 1 << (k % 64)
				}
			}
		}
		n := len(planGrid)
		for k := n - 1; k >= 0; k-- {
			pc.next[k] = uint16(n)
			if k+1 < n {
				pc.next[k] = pc.next[k+1]
				if pc.launch(k + 1) {
					pc.next[k] = uint16(k + 1)
				}
			}
		}
	}
	return pc
}

// launch reports whether the policy launches at elapsed planGrid[k].
func (pc *planCache) launch(k int) bool { return pc.pos[k/64]&(1<<(k%64)) != 0 }

// solve decides the forecast policy's launches on the whole grid for one
// stratum, as an optimal stopping problem (the features held as they are;
// before the run's first completed spell, on a prior at the task's time
// scale: spell.Model.PredictScaled):
// launching at x_k is worth its expected score G_k; waiting is worth
// P(L ≥ x_{k+1} | L ≥ x_k)·V_{k+1}, less the work the spell would have
// taken meanwhile, with V_k = max(G_k, waiting). It launches where G_k > 0
// and G_k is at least what waiting is worth: waiting out the short spells
// is how a timeout wins, and the forecast learns where that pays, and
// where it does not. (Without the forgone work, waiting always looked
// free: mean V 0.21 against 0.39 with it on the quick set.) A point
// launches only if launching at the next point is worth more than nothing
// too: its decision holds until then, and near a spell's likely end the
// left end's forecast (a spell that has lasted x_k) is too hopeful for a
// task launched just before x_{k+1}.
func (pc *planCache) solve(e *Engine) {
	l := pc.lane
	n := len(planGrid)
	var g, surv [gridLen]float64
	for k := range n {
		dist := e.model.PredictScaled(planGrid[k], pc.key, l.c)
		g[k], pc.p[k] = gain(dist, l.d, l.c, l.alpha, e.cfg.Mode)
		if k+1 < n {
			surv[k] = dist.Survival(planGrid[k+1] - planGrid[k])
		}
	}
	v := math.Max(g[n-1], 0)
	for k := n - 1; k >= 0; k-- {
		wait := 0.0
		if k+1 < n {
			// Waiting forgoes the work the spell would have taken
			// meanwhile if it outlasts the task: (x_{k+1} − x_k)·d/(o+d)
			// with probability P(R ≥ o+d).
			wait = surv[k]*v - (planGrid[k+1]-planGrid[k])*l.d/l.c*pc.p[k]
		}
		if g[k] > 0 && g[k] >= wait && (k+1 == n || g[k+1] > 0) {
			pc.pos[k/64] |= uint64(1) << (k % 64)
		}
		v = math.Max(g[k], wait)
	}
}

// timeEps is how close two times are to count as equal (1 ns: traces
// resolve µs or ns, and back-to-back tasks add up rounding errors): a task
// ending within it of its spell's end completed; a launch within it of the
// end does not happen.
const timeEps = 1e-9

// after is the time a spell that started at start has lasted x, and now
// when it already has (start + (now − start) need not be now in floating
// point: back-to-back tasks start exactly when the previous one ends).
func after(now, start, x float64) float64 {
	if now-start >= x {
		return now
	}
	return start + x
}

// gain is the expected score of launching now, and the probability that
// the spell outlasts the task.
func gain(d spell.Dist, dur, c, alpha float64, m Mode) (float64, float64) {
	p := d.Survival(c)
	mm := d.MeanMin(c)
	if m == Kill {
		return dur*p - alpha*(mm-c*p), p
	}
	return dur - alpha*(c-mm), p
}

// publishPlan publishes the launch windows forecast lane i would plan idle
// worker w by, when they are not those it last published in the spell (a
// running lane plans by them once its task completes: they are published
// all the same).
func (e *Engine) publishPlan(w *worker, i int) {
	l, ls := e.lanes[i], &w.lanes[i]
	// The windows are solved here whether or not they are published: a
	// plan depends on when in the model's epoch it was solved, and the
	// decisions must not depend on who listens.
	pc := e.planCache(e.features(w).Stratum(), i)
	if e.sink.Plan == nil || w.gang {
		return
	}
	if ls.published && pc.pos == ls.pub {
		return
	}
	event := "update"
	if !ls.published {
		event = "idle"
	}
	ls.pub, ls.published = pc.pos, true
	e.sendPlan(w, l, e.now, event, pc)
}

// sendPlan writes a plan record; pc nil: no windows (the spell or the run
// ended).
func (e *Engine) sendPlan(w *worker, l *lane, t float64, event string, pc *planCache) {
	l.plans++
	p := tracecast.Plan{Run: e.cfg.Run, IssuedAt: t, Event: event, SpellStart: math.NaN(), D: l.d, Overhead: e.cfg.Overhead,
		Mode: string(e.cfg.Mode), Alpha: l.alpha}
	if w != nil {
		p.Worker, p.SpellStart = w.name, w.start
	}
	p.ID = fmt.Sprintf("%s/plan/%s/a%v/%d", e.cfg.Run, label(l.d), l.alpha, l.plans)
	if pc != nil {
		p.Launch, p.P = []byte("["), []byte("[")
		n := len(planGrid)
		for k := 0; k < n; k++ {
			if !pc.launch(k) || k > 0 && pc.launch(k-1) {
				continue
			}
			end := k
			for end < n && pc.launch(end) {
				end++
			}
			if len(p.P) > 1 {
				p.Launch, p.P = append(p.Launch, ','), append(p.P, ',')
			}
			p.Launch = tracecast.AppendJSONNumber(append(p.Launch, '['), planGrid[k])
			p.Launch = append(p.Launch, ',')
			if end < n {
				p.Launch = tracecast.AppendJSONNumber(p.Launch, planGrid[end])
			} else {
				p.Launch = append(p.Launch, "null"...)
			}
			p.Launch = append(p.Launch, ']')
			p.P = tracecast.AppendJSONNumber(p.P, pc.p[k])
		}
		p.Launch, p.P = append(p.Launch, ']'), append(p.P, ']')
	}
	e.sink.Plan(p)
}
