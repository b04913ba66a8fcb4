// Package features reads from a trace, causally, what a forecaster can
// know at time t besides the occupancy of a class (forecast.Context): the
// runtime's ready and submitted task counts (StarPU's variables, by type
// name), what each selected container is doing — the kind of its idle
// state and how long its spell has lasted, the state it computes in and
// how much longer a per-state duration model learnt online from the
// states already finished in the run expects it to last —, the
// time since the application thread last submitted a task.
//
// A Feed takes entity batches as they are read (Add), moves those that
// start before the reader's watermark into a time-ordered queue (Sweep)
// and applies them in time order (ApplyThrough), calling back before each
// so that a forecast engine issues what is due first: the context at t is
// made of the trace up to t only. A state's duration is learnt at its end,
// not when the state is read (a state arrives complete, with its end in
// the future of its start); for the same reason the task counts are known
// from the end of their pieces (a piece is read at the count's next
// change: the feed knows the value before the last change) and the
// application thread's submissions from their end, and its long states ("Waiting all
// tasks", open until the run drains) are not read at all: a stream knows
// them only once they end, and waiting for them would hold every forecast
// back until then. A trace without a feature (SimGrid has no task counts)
// gives the others; the forecaster reads the missing ones as absent.
package features

import (
	"cmp"
	"math"
	"slices"

	"github.com/tracecast/tracecast"
	fc "github.com/tracecast/tracecast/forecast"
	"github.com/tracecast/tracecast/internal/strmemo"
	"github.com/tracecast/tracecast/stages/signal"
)

// StarPU's names: the scheduler's variables and the application thread's
// state type and submission state.
const (
	ReadyVariable     = "Number of Ready Tasks"
	SubmittedVariable = "Number of Submitted Uncompleted Tasks"
	UserThreadType    = "User Thread State"
	SubmittingState   = "Submitting task"
)

// Limits bound a Feed's memory.
type Limits struct {
	// MaxPending is how many entities a Feed holds until the watermark
	// passes them (default DefaultMaxPending); past it, entities are
	// dropped (Dropped counts them) and the features get staler, the
	// forecasts go on.
	MaxPending int
	// MaxValues is how many distinct state values the duration model
	// learns (default DefaultMaxValues): codelets and MPI calls are few;
	// a trace naming every state differently learns no more than that.
	MaxValues int
}

// The default limits.
const (
	DefaultMaxPending = 1 << 20
	DefaultMaxValues  = 4096
)

// Feed is the feature feed of one run.
type Feed struct {
	rules  *signal.Rules
	class  signal.Class
	perSec float64
	lim    Limits

	conts strmemo.Map[*cont] // selected containers
	byID  []*cont            // in order of appearance (event.who)
	order []*cont            // by name, for a deterministic sweep
	dirty bool               // order needs sorting
	// vars are the task counts' pieces not swept, a series per count
	// (2·container, +1 for the submitted count), subs the submissions:
	// each arrives in time order, a run of the sweep's merge as it is (in
	// one queue they had to be sorted, a tenth of the feed's time).
	vars   []pend[varItem]
	subs   pend[varItem]
	queue  []event // swept, not applied, in time order
	qhead  int
	runs   []int   // Sweep's: where each container's events start
	merged []event // Sweep's merge buffer
	seq    uint64
	held   int // entities held (pending states and variables)

	// ready and submitted are the task counts by container (varIDs),
	// NaN before the first.
	varIDs strmemo.Map[int32]
	// The kinds of the state and variable types met.
	stateKinds, varKinds strmemo.Map[kind]
	ready, submitted     []float64
	model                strmemo.Map[*duration]
	lastSubmit           float64
	dropped              int
}

// cont is a selected container (worker, rank) whose states the feed
// follows.
type cont struct {
	name string
	id   int32
	// pending are the states not swept, by (start, imbrication,
	// arrival) once swept (nested states come innermost first).
	pending pend[item]
	stack   []item // open states, innermost last
	// Applied state: the innermost state's value, since when, its class
	// and since when the container has been in it.
	value      string
	since      float64
	cls        signal.Class
	classSince float64
	seen       bool
}

type item struct {
	start, end float64
	imb        int
	value      string
	seq        uint64
}

// varItem is a task count's piece or, with submit set, a submission, both
// at their end.
type varItem struct {
	t, v      float64
	who       int32
	submitted bool
	submit    bool
	seq       uint64
}

type eventKind uint8

const (
	evTop    eventKind = iota // a container's innermost state changes
	evLearn                   // a state ended: its duration is known
	evVar                     // a task count changes
	evSubmit                  // the application ends submitting a task
)

// event is 48 bytes: a sweep sorts hundreds of thousands of them.
type event struct {
	t, x      float64 // time; duration or count
	seq       uint64
	value     string
	who       int32 // the container (byID) or the count's container (varIDs)
	kind      eventKind
	submitted bool
}

// duration is a state value's duration model: an exponentially weighted
// mean of the durations seen (the weight 1/n until 1/64, so that it
// follows a run whose tasks slow down or speed up).
type duration struct {
	n    int
	mean float64
}

func (d *duration) add(x float64) {
	d.n++
	d.mean += (x - d.mean) / float64(min(d.n, 64))
}

// remaining is the expected remaining time of a state of that value
// begun age ago: the mean minus the age, and once past the mean a
// quarter of the age (a state that outlasted its usual length is in a
// long tail: the longer it ran, the longer it goes on).
func (d *duration) remaining(age float64) float64 {
	return math.Max(d.mean-age, 0.25*age)
}

// New returns a feed for the selected containers of rules (compiled), the
// counted class, and a trace's units per second.
func New(rules *signal.Rules, class signal.Class, perSec float64, lim Limits) *Feed {
	if lim.MaxPending <= 0 {
		lim.MaxPending = DefaultMaxPending
	}
	if lim.MaxValues <= 0 {
		lim.MaxValues = DefaultMaxValues
	}
	return &Feed{rules: rules, class: class, perSec: perSec, lim: lim,
		lastSubmit: math.NaN()}
}

// Watermark is the instant before which a Feed has every entity it reads
// in a batch whose selected containers' state type has the watermark tw
// (trace units): the least of tw and the task counts' watermarks, which
// are on the pieces' ends (the feed reads a piece at its end; a type not
// listed has no change waiting). The application thread's submissions
// count from their end too, before tw once tw passed it (tw is at most the
// latest time read less the reorder horizon).
func Watermark(b tracecast.Batch, tw float64) float64 {
	for _, ty := range []string{ReadyVariable, SubmittedVariable} {
		if w, ok := b.TypeWatermarks[ty]; ok {
			tw = min(tw, w)
		}
	}
	return tw
}

// Dropped is the number of entities dropped at MaxPending.
func (f *Feed) Dropped() int { return f.dropped }

// kind is what the feed reads of an entity, by its nature and type.
type kind uint8

const (
	kindOther     kind = iota
	kindState          // a state of the selected containers' type
	kindUser           // a state of the application thread (read if submitting)
	kindReady          // the ready task count
	kindSubmitted      // the submitted task count
)

// kindOf is an entity's kind, remembered by type name (comparing every
// entity's type with four names was a tenth of the feed's time).
func (f *Feed) kindOf(e *tracecast.Entity) kind {
	var m *strmemo.Map[kind]
	switch e.Nature {
	case tracecast.NatureState:
		m = &f.stateKinds
	case tracecast.NatureVariable:
		m = &f.varKinds
	default:
		return kindOther
	}
	if k, ok := m.Get(e.Type); ok {
		return k
	}
	k := kindOther
	switch {
	case e.Nature == tracecast.NatureState && e.Type == f.rules.StateType:
		k = kindState
	case e.Nature == tracecast.NatureState && e.Type == UserThreadType:
		k = kindUser
	case e.Nature == tracecast.NatureVariable && e.Type == ReadyVariable:
		k = kindReady
	case e.Nature == tracecast.NatureVariable && e.Type == SubmittedVariable:
		k = kindSubmitted
	}
	if m.Len() < f.lim.MaxValues {
		m.Put(e.Type, k)
	}
	return k
}

// Add takes a batch of entities (times in the trace's units).
func (f *Feed) Add(es []tracecast.Entity) {
	for i := range es {
		e := &es[i]
		k := f.kindOf(e)
		if k == kindOther || k == kindUser && e.Value != SubmittingState {
			continue
		}
		if f.held >= f.lim.MaxPending {
			f.dropped++
			continue
		}
		start, end := e.Start/f.perSec, e.End/f.perSec
		switch k {
		case kindReady, kindSubmitted:
			f.held++
			f.seq++
			id, ok := f.varIDs.Get(e.Container)
			if !ok {
				id = int32(len(f.ready))
				f.varIDs.Put(e.Container, id)
				f.ready, f.submitted = append(f.ready, math.NaN()), append(f.submitted, math.NaN())
				f.vars = append(f.vars, pend[varItem]{}, pend[varItem]{})
			}
			// A piece is read when the count changes again (its end):
			// waiting for the piece in force would hold every forecast
			// back while a count stays put (the ready count at 0 through
			// a run's drain). The feed knows a count from the end of its
			// piece: the value it had before its last change.
			sub := k == kindSubmitted
			f.vars[2*id+int32(b2i(sub))].push(varItem{t: end, v: e.Number, who: id, submitted: sub, seq: f.seq})
			continue
		case kindUser:
			f.held++
			f.seq++
			f.subs.push(varItem{t: end, submit: true, seq: f.seq})
			continue
		}
		c, _ := f.conts.Get(e.Container)
		if c == nil {
			c = &cont{name: e.Container, id: int32(len(f.byID)), cls: f.rules.Outside}
			f.conts.Put(e.Container, c)
			f.order, f.dirty = append(f.order, c), true
			f.byID = append(f.byID, c)
		}
		f.held++
		f.seq++
		c.pending.push(item{start: start, end: end, imb: e.Imbrication, value: e.Value, seq: f.seq})
	}
}

// Sweep moves what starts before w (trace units) into the queue, with the
// ends of states before w, in time order.
func (f *Feed) Sweep(w float64) {
	w /= f.perSec
	if f.dirty {
		slices.SortFunc(f.order, func(a, b *cont) int { return cmp.Compare(a.name, b.name) })
		f.dirty = false
	}
	// Drop the applied events before adding: moved to the front only
	// once they are fewer than those applied (copying them every sweep
	// was 4% of predict's time on the 41 MB trace).
	if f.qhead > 0 && f.qhead >= len(f.queue)-f.qhead {
		n := copy(f.queue, f.queue[f.qhead:])
		f.queue, f.qhead = f.queue[:n], 0
	}
	from := len(f.queue)
	f.runs = f.runs[:0]
	for _, c := range f.order {
		f.runs = append(f.runs, len(f.queue))
		f.sweepCont(c, w)
	}
	for i := range f.vars {
		f.runs = append(f.runs, len(f.queue))
		f.sweepVars(&f.vars[i], w)
	}
	f.runs = append(f.runs, len(f.queue))
	f.sweepVars(&f.subs, w)
	// The events of one sweep, by time, then by arrival, then by kind (a
	// state's end and the change it makes share its arrival), then in the
	// order made (a zero-length state's push and pop): the same whatever
	// the batches. Each container's events and each series' are a run in
	// that order already, or nearly: the runs are sorted, then merged (a
	// sort of them all was 12% of predict's time).
	if m := mergeRuns(f.queue[from:], f.runs, from, f.merged[:0]); m != nil {
		f.merged = m
		copy(f.queue[from:], m)
	}
}

// sweepVars queues a series' pieces or submissions that end before w.
func (f *Feed) sweepVars(p *pend[varItem], w float64) {
	k := 0
	for _, v := range p.order(byTime) {
		if !(v.t < w) {
			break
		}
		kind := evVar
		if v.submit {
			kind = evSubmit
		}
		f.queue = append(f.queue, event{t: v.t, kind: kind, x: v.v, who: v.who, submitted: v.submitted, seq: v.seq})
		k++
	}
	f.held -= k
	p.drop(k)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// byEvent is the queue's order.
func byEvent(a, b event) int {
	if c := cmp.Compare(a.t, b.t); c != 0 {
		return c
	}
	if c := cmp.Compare(a.seq, b.seq); c != 0 {
		return c
	}
	return cmp.Compare(a.kind, b.kind)
}

// mergeRuns sorts the runs of s — s[starts[i]−off : starts[i+1]−off], the
// last to the end — and merges them into out (returned): the order of a
// stable sort of s by byEvent (events tie only within a run: arrivals are
// one container's or the variables'). A binary heap of the runs' heads;
// for events only, so that the comparisons inline (the generic version,
// comparing through a function value, was two fifths of the feed's time).
// Nil when s is then in order already (one run or none).
func mergeRuns(s []event, starts []int, off int, out []event) []event {
	type run struct{ i, end int }
	var heap []run
	for k, st := range starts {
		end := len(s)
		if k+1 < len(starts) {
			end = starts[k+1] - off
		}
		if st -= off; st < end {
			sortNearly(s[st:end], byEvent)
			heap = append(heap, run{st, end})
		}
	}
	if len(heap) <= 1 {
		return nil
	}
	less := func(a, b int) bool { return eventLess(&s[heap[a].i], &s[heap[b].i]) }
	down := func(i int) {
		for {
			l, m := 2*i+1, i
			if l < len(heap) && less(l, m) {
				m = l
			}
			if r := l + 1; r < len(heap) && less(r, m) {
				m = r
			}
			if m == i {
				return
			}
			heap[i], heap[m] = heap[m], heap[i]
			i = m
		}
	}
	for i := len(heap)/2 - 1; i >= 0; i-- {
		down(i)
	}
	for len(heap) > 0 {
		out = append(out, s[heap[0].i])
		if heap[0].i++; heap[0].i == heap[0].end {
			heap[0] = heap[len(heap)-1]
			heap = heap[:len(heap)-1]
		}
		down(0)
	}
	return out
}

// eventLess is byEvent(*a, *b) < 0 (times are never NaN: the parser
// refuses them).
func eventLess(a, b *event) bool {
	if a.t != b.t {
		return a.t < b.t
	}
	if a.seq != b.seq {
		return a.seq < b.seq
	}
	return a.kind < b.kind
}

// sweepCont runs a container's states that start before w through its
// stack (a state at a level at or below the top replaces those above it;
// a state ends at its end), queueing its changes of innermost state and
// the durations of the states that ended before w.
func (f *Feed) sweepCont(c *cont, w float64) {
	pending := c.pending.order(byStart)
	k := 0
	for ; k < len(pending) && pending[k].start < w; k++ {
		s := pending[k]
		f.closeUntil(c, s.start)
		for len(c.stack) > 0 && c.stack[len(c.stack)-1].imb >= s.imb {
			top := c.stack[len(c.stack)-1]
			c.stack = c.stack[:len(c.stack)-1]
			f.learn(c, top, math.Min(top.end, s.start))
		}
		c.stack = append(c.stack, s)
		f.top(c, s.start, s.seq)
	}
	f.held -= k
	c.pending.drop(k)
	f.closeUntil(c, w)
}

// closeUntil ends the open states that end by t.
func (f *Feed) closeUntil(c *cont, t float64) {
	for len(c.stack) > 0 && c.stack[len(c.stack)-1].end <= t {
		top := c.stack[len(c.stack)-1]
		c.stack = c.stack[:len(c.stack)-1]
		// The change first: byEvent puts it before the duration of the
		// same state (same time and arrival), and a container's events
		// made in that order need no sort in Sweep.
		f.top(c, top.end, top.seq)
		f.learn(c, top, top.end)
	}
}

// learn queues a state's duration, known at its end.
func (f *Feed) learn(_ *cont, s item, end float64) {
	f.queue = append(f.queue, event{t: end, kind: evLearn, value: s.value, x: end - s.start, seq: s.seq})
}

// byTime and byStart are total orders (arrival last): an unstable sort
// gives what a stable one would.
func byTime(a, b varItem) int {
	if x := cmp.Compare(a.t, b.t); x != 0 {
		return x
	}
	return cmp.Compare(a.seq, b.seq)
}

func byStart(a, b item) int {
	if x := cmp.Compare(a.start, b.start); x != 0 {
		return x
	}
	if x := cmp.Compare(a.imb, b.imb); x != 0 {
		return x
	}
	return cmp.Compare(a.seq, b.seq)
}

// top queues the container's innermost state from t (none: the rules'
// no-state class).
func (f *Feed) top(c *cont, t float64, seq uint64) {
	v := ""
	if len(c.stack) > 0 {
		v = c.stack[len(c.stack)-1].value
	}
	f.queue = append(f.queue, event{t: t, kind: evTop, who: c.id, value: v, seq: seq})
}

// ApplyThrough applies the queued events at or before t (seconds), in
// time order, calling before(time) ahead of each: a forecast engine's
// Advance, so that what is due before an event is issued without it.
func (f *Feed) ApplyThrough(t float64, before func(float64)) {
	for f.qhead < len(f.queue) && f.queue[f.qhead].t <= t {
		ev := &f.queue[f.qhead]
		if before != nil {
			before(ev.t)
		}
		f.apply(ev)
		*ev = event{}
		f.qhead++
	}
}

// ApplyAll applies every queued event (ApplyThrough +Inf).
func (f *Feed) ApplyAll(before func(float64)) { f.ApplyThrough(math.Inf(1), before) }

func (f *Feed) apply(ev *event) {
	switch ev.kind {
	case evTop:
		c := f.byID[ev.who]
		cls := f.rules.Outside
		if ev.value != "" {
			cls = f.rules.Classify(ev.value)
		}
		if !c.seen || cls != c.cls {
			c.classSince = ev.t
		}
		if !c.seen || ev.value != c.value {
			c.since = ev.t
		}
		c.seen, c.value, c.cls = true, ev.value, cls
	case evSubmit:
		f.lastSubmit = ev.t
	case evLearn:
		d, _ := f.model.Get(ev.value)
		if d == nil {
			if f.model.Len() >= f.lim.MaxValues {
				return
			}
			d = &duration{}
			f.model.Put(ev.value, d)
		}
		d.add(ev.x)
	case evVar:
		if ev.submitted {
			f.submitted[ev.who] = ev.x
		} else {
			f.ready[ev.who] = ev.x
		}
	}
}

// Context fills c with the context at t (seconds): the events applied so
// far. It is the engine's forecast.ContextFunc.
func (f *Feed) Context(t float64, c *fc.Context) {
	c.Reset()
	c.Ready, c.Submitted = sum(f.ready), sum(f.submitted)
	if !math.IsNaN(f.lastSubmit) {
		c.SinceSubmit = t - f.lastSubmit
	}
	for _, k := range f.order {
		if !k.seen {
			continue
		}
		rem := math.NaN()
		if d, _ := f.model.Get(k.value); d != nil && k.value != "" {
			rem = d.remaining(t - k.since)
		}
		switch {
		case k.cls == f.class:
			c.Idle = append(c.Idle, fc.Spell{Age: t - k.classSince, Remaining: rem})
		case k.cls == signal.Compute:
			if math.IsNaN(rem) {
				rem = math.Inf(1) // a task of a codelet never seen ending: not ending soon
			}
			c.Busy = append(c.Busy, rem)
		case k.cls == signal.Comm:
			c.Comm++
		}
	}
}

// sum of the counts known (NaN when none is).
func sum(xs []float64) float64 {
	s, known := 0.0, false
	for _, v := range xs {
		if !math.IsNaN(v) {
			s, known = s+v, true
		}
	}
	if !known {
		return math.NaN()
	}
	return s
}
