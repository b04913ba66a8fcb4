package signal

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/internal/strmemo"
)

// Live samples the signal while the trace is still being read, for a given
// period: states arrive as they complete, and samples before the input's
// low watermark (no state starting earlier can still come) are final. It
// keeps only the states not yet swept and the open stack of each container:
// memory follows the watermark's lag, not the trace.
//
// Differences with Build (the offline signal): t_0 is the first state start
// swept, and a container counts from its first state on (offline, every
// selected container counts from t_0, in Outside before its first state).
type Live struct {
	rules *Rules
	// stateType is rules.StateType, then the trace's own string of it
	// once met: the parser interns type names, and two strings at one
	// address compare without reading their bytes.
	stateType string
	class     Class
	period    float64
	conts     strmemo.Map[*liveCont]
	counts    [NumClasses]int32
	r         int
	t0        float64
	started   bool
	k         int
	swept     float64 // changes before this time are applied
	changes   []change
	end       float64
	// fixed: every selected container counts from t_0 (FromStart).
	fixed bool
	// mergeRuns: consecutive states in one class are one span (MergeRuns).
	mergeRuns bool
	// order lists the containers by name (a deterministic order for
	// changes at equal times); sorted is false when one was added since.
	order  []*liveCont
	sorted bool
	// runs[i] is where order[i]'s changes start in changes (each
	// container's are in time order); merged is the merge of them.
	runs   []int
	merged []change
	heap   []int
	// names are the state values kept (KeepValues), names[0] = "";
	// valueIDs their indices.
	names    []string
	valueIDs map[string]uint16
	// err: the period is below the resolution of the trace's times (t_k
	// did not advance); sampling has stopped (Err).
	err error
}

type liveCont struct {
	name string
	// The states received, not yet swept, are buf[head:] and late: buf
	// holds those that arrived in (start, imbrication) order (most do),
	// late is a min-heap of the others, both ordered by (start,
	// imbrication, arrival). States arrive as they complete, so nested
	// states come innermost first, each before the last one received: an
	// insertion into a sorted slice moved the whole buffer each time,
	// quadratic in the nesting depth (80k PushStates deep took 26 s).
	buf   []pendingSpan
	head  int
	late  []pendingSpan
	seq   uint64 // arrivals so far: a stable order for equal keys
	stack []span
	cur   Class
	first float64 // start of its first state (once swept)
	// work counts the element moves and comparisons of the buffer, for
	// the tests: O(log n) per state, whatever the order of arrival.
	work      int
	mergeRuns bool // Live.mergeRuns
}

// pendingSpan is a state waiting to be swept and its arrival number.
type pendingSpan struct {
	span
	seq uint64
}

// before orders the pending states by (start, imbrication, arrival).
func (a *pendingSpan) before(b *pendingSpan) bool {
	return a.start < b.start || a.start == b.start && (a.imb < b.imb || a.imb == b.imb && a.seq < b.seq)
}

// NewLive returns a live sampler of class c at period (trace units).
func NewLive(r *Rules, c Class, period float64) *Live {
	return &Live{rules: r, stateType: r.StateType, class: c, period: period, swept: math.Inf(-1), end: math.Inf(-1)}
}

// MergeRuns keeps consecutive states of a container in one class as one
// span while they wait for the watermark (span.extends): the counts after
// each instant, the samples and R are the same, but the changes at an
// instant where such a state follows another (compute → idle → compute)
// are not reported. For consumers of the counts only (samples, steps), not
// of every change (the forecast engine counts switches); call it before
// Add.
func (l *Live) MergeRuns() { l.mergeRuns = true }

// KeepValues makes ContainerChanges tell the innermost state's value at
// each change of class (ContainerChange.Value): the first MaxValues
// distinct values, "" for the later ones. Call it before Add.
func (l *Live) KeepValues() {
	l.names, l.valueIDs = []string{""}, map[string]uint16{"": 0}
}

// MaxValues is how many distinct state values KeepValues tells apart.
const MaxValues = math.MaxUint16

func (l *Live) valueID(v string) uint16 {
	id, ok := l.valueIDs[v]
	if !ok && len(l.names) <= MaxValues {
		id = uint16(len(l.names))
		l.valueIDs[v] = id
		l.names = append(l.names, v)
	}
	return id
}

// R is the number of selected containers seen so far (FromStart's r in
// that mode).
func (l *Live) R() int { return l.r }

// FromStart makes the sampler count as the offline signal does: r selected
// containers from t_0 on, each in the rules' Outside class until its first
// state (those that never have a state included), instead of each from its
// first state on. It is how a second pass samples once a first one counted
// the containers (Survey). Call it before the first Advance or Changes.
func (l *Live) FromStart(r int) {
	l.fixed, l.r = true, r
	l.counts[l.rules.Outside] = int32(r)
}

// RBefore is the number of selected containers whose first state starts
// before t. Once the watermark passed t it no longer changes, whatever the
// batches the input came in: a deterministic R for the engines (R() at the
// first sample depends on how far the first batch reached).
func (l *Live) RBefore(t float64) int {
	n := 0
	for _, c := range l.order {
		if c.stack != nil && c.first < t {
			n++
		}
	}
	return n
}

// Known reports whether a state of container c was added.
func (l *Live) Known(c string) bool {
	_, ok := l.conts.Get(c)
	return ok
}

// Started reports whether a sample was produced (T0 is known).
func (l *Live) Started() bool { return l.started }

// T0 is the first state start (valid once a sample was produced).
func (l *Live) T0() float64 { return l.t0 }

// Add takes a batch of entities.
func (l *Live) Add(es []tracecast.Entity) {
	for i := range es {
		e := &es[i]
		if e.Nature != tracecast.NatureState || e.Type != l.stateType {
			continue
		}
		l.stateType = e.Type
		c, _ := l.conts.Get(e.Container)
		if c == nil {
			c = &liveCont{name: e.Container, cur: l.rules.Outside, mergeRuns: l.mergeRuns}
			l.conts.Put(e.Container, c)
			l.order, l.sorted = append(l.order, c), false
		}
		sp := span{start: e.Start, end: e.End, imb: int32(e.Imbrication), class: l.rules.Classify(e.Value)}
		if l.valueIDs != nil {
			sp.value = l.valueID(e.Value)
		}
		c.insert(sp)
		l.end = math.Max(l.end, e.End)
	}
}

// insert adds a state to the buffer, in (start, imbrication) order after
// those with the same key (a stable sort of the arrival order): appended
// to buf when it goes after buf's last state, else pushed on late. O(1)
// for states in order, O(log n) for the others.
func (c *liveCont) insert(sp span) {
	p := pendingSpan{sp, c.seq}
	c.seq++
	c.work++
	if n := len(c.buf); n == c.head || !p.before(&c.buf[n-1]) {
		if c.mergeRuns && n > c.head && c.buf[n-1].extends(sp) {
			c.buf[n-1].end = sp.end
			return
		}
		c.buf = append(c.buf, p)
		return
	}
	h := append(c.late, p)
	for i := len(h) - 1; i > 0; {
		parent := (i - 1) / 2
		c.work++
		if !h[i].before(&h[parent]) {
			break
		}
		h[i], h[parent] = h[parent], h[i]
		i = parent
	}
	c.late = h
}

// extends reports whether b continues a in the same class at the bottom
// of the stack (a SetState after another): one span [a.start, b.end)
// makes the same changes, since the states of level 0 never overlap and
// the states nested in a end by a.end. (Above level 0 it would not: a
// SetState at a.end resets the stack, and b pushed at that instant must
// not outlive it.) The signal counts containers per class: merging such
// states keeps the memory of a container's states behind the watermark
// (another container's state open since the start holds it) to its class
// changes, not one span per state — 2M SetStates of distinct codelets
// (all compute) took 500 MB.
func (a span) extends(b span) bool {
	return a.end == b.start && a.imb == 0 && b.imb == 0 && a.class == b.class
}

// next removes and returns the first pending state if it starts before w.
func (c *liveCont) next(w float64) (span, bool) {
	c.work++
	inBuf := c.head < len(c.buf)
	if len(c.late) > 0 && (!inBuf || c.late[0].before(&c.buf[c.head])) {
		if !(c.late[0].start < w) {
			return span{}, false
		}
		return c.popLate(), true
	}
	if !inBuf || !(c.buf[c.head].start < w) {
		return span{}, false
	}
	s := c.buf[c.head].span
	c.head++
	return s, true
}

// popLate removes the first state of the heap late.
func (c *liveCont) popLate() span {
	h := c.late
	top := h[0].span
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	for i := 0; ; {
		m, l, r := i, 2*i+1, 2*i+2
		c.work++
		if l < n && h[l].before(&h[m]) {
			m = l
		}
		if r < n && h[r].before(&h[m]) {
			m = r
		}
		if m == i {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	c.late = h
	return top
}

// compact drops the swept states from buf: when none is left, or once
// they are at least half of it (an amortized O(1) per state; moving the
// rest down after every sweep was O(buffer) per batch).
func (c *liveCont) compact() {
	switch {
	case c.head == len(c.buf):
		c.buf, c.head = c.buf[:0], 0
	case c.head > 0 && 2*c.head >= len(c.buf):
		n := copy(c.buf, c.buf[c.head:])
		c.work += n
		c.buf, c.head = c.buf[:n], 0
	}
}

// newContainer marks a change that is a container's first state: from then
// on it counts (in Outside until its state's own change applies).
const newContainer Class = NumClasses

// sweep moves the states that start before w from the containers' buffers
// onto their stacks, collecting the class changes before w in l.changes
// (sorted by time), and returns the earliest state start swept.
func (l *Live) sweep(w float64) float64 {
	l.changes = l.changes[:0]
	if !l.sorted {
		sort.Slice(l.order, func(i, j int) bool { return l.order[i].name < l.order[j].name })
		l.sorted = true
	}
	first := math.Inf(1)
	l.runs = l.runs[:0]
	for _, c := range l.order {
		l.runs = append(l.runs, len(l.changes))
		for {
			s, ok := c.next(w)
			if !ok {
				break
			}
			first = math.Min(first, s.start)
			if c.stack == nil { // first state of this container: it counts from now on
				c.first = s.start
				l.changes = append(l.changes, change{t: s.start, from: newContainer, to: l.rules.Outside, c: int32(len(l.runs) - 1)})
				c.stack = make([]span, 0, 4)
			}
			l.closeUntil(c, s.start)
			// A state at a lower or equal level replaces those above it.
			for len(c.stack) > 0 && c.stack[len(c.stack)-1].imb >= s.imb {
				c.stack = c.stack[:len(c.stack)-1]
			}
			c.stack = append(c.stack, s)
			l.set(c, s.start, s.class, s.value)
		}
		c.compact()
		l.closeUntil(c, w)
	}
	l.merge()
	return first
}

// merge orders the changes by time, those of one container in their order
// and equal times in container order: a stable sort of the containers'
// runs, each already in time order, done as a k-way merge.
func (l *Live) merge() {
	runs, ch := l.runs, l.changes
	end := func(i int) int {
		if i+1 < len(runs) {
			return runs[i+1]
		}
		return len(ch)
	}
	// Most sweeps are short: when the runs happen to be in order, done. A
	// run out of order (states not nested within each other, which a Paje
	// stack cannot make) is sorted the slow way.
	inOrder, runsInOrder, r := true, true, 0
	for i := 1; i < len(ch); i++ {
		for r+1 < len(runs) && runs[r+1] <= i {
			r++
		}
		if ch[i-1].t > ch[i].t {
			inOrder = false
			if runs[r] != i {
				runsInOrder = false
				break
			}
		}
	}
	if inOrder {
		return
	}
	if !runsInOrder {
		slices.SortStableFunc(ch, func(a, b change) int { return cmp.Compare(a.t, b.t) })
		return
	}
	pos := make([]int, 0, len(runs))
	h := l.heap[:0]
	for i := range runs {
		pos = append(pos, runs[i])
		if runs[i] < end(i) {
			h = append(h, i)
		}
	}
	// before orders two runs' heads: time, then container order.
	before := func(a, b int) bool {
		ta, tb := ch[pos[a]].t, ch[pos[b]].t
		return ta < tb || ta == tb && a < b
	}
	down := func(i int) {
		for {
			m, lc, rc := i, 2*i+1, 2*i+2
			if lc < len(h) && before(h[lc], h[m]) {
				m = lc
			}
			if rc < len(h) && before(h[rc], h[m]) {
				m = rc
			}
			if m == i {
				return
			}
			h[i], h[m] = h[m], h[i]
			i = m
		}
	}
	for i := len(h)/2 - 1; i >= 0; i-- {
		down(i)
	}
	out := l.merged[:0]
	for len(h) > 0 {
		r := h[0]
		out = append(out, ch[pos[r]])
		pos[r]++
		if pos[r] == end(r) {
			h[0] = h[len(h)-1]
			h = h[:len(h)-1]
		}
		down(0)
	}
	l.heap = h
	l.merged, l.changes = ch[:0], out
}

// Advance sweeps everything before w and calls fn with every sample t_k < w
// (the final ones), in order. Advance(+Inf) at the end of input samples up to
// the last state end.
func (l *Live) Advance(w float64, fn func(k int, t float64, x int)) {
	final := w
	if math.IsInf(w, 1) {
		final = l.end
	}
	first := l.sweep(w)
	if !l.started {
		if math.IsInf(first, 1) {
			return
		}
		l.t0, l.started = first, true
	}
	// Samples before a change see the counts before it: [start, end).
	sampleUntil := func(t float64) {
		for l.err == nil {
			tk := l.t0 + float64(l.k)*l.period
			if tk >= t || tk >= final {
				return
			}
			if l.k > 0 && tk <= l.t0+float64(l.k-1)*l.period {
				// Without a first pass no sample count bounds the
				// period: one below the times' float resolution
				// would give samples at one instant for ever.
				l.err = fmt.Errorf("period %g is below the resolution of the trace's times (at %g, t_%d = t_%d): raise it", l.period, tk, l.k, l.k-1)
				return
			}
			fn(l.k, tk, int(l.counts[l.class]))
			l.k++
		}
	}
	// A container counts from its first state on, in time order like the
	// class changes: how the input was cut into batches changes nothing.
	for _, ch := range l.changes {
		sampleUntil(ch.t)
		l.apply(ch)
	}
	sampleUntil(final)
}

// Err is why sampling stopped, if it did: a period the trace's times
// cannot resolve.
func (l *Live) Err() error { return l.err }

// StartedWithin counts the selected containers whose first state starts in
// (a, b): those a sample at a did not count yet. The offline signal counts
// every container from t_0, in the rules' Outside class before its first
// state; a live sampler that fixes R at b corrects its samples before b
// with it.
func (l *Live) StartedWithin(a, b float64) int {
	n := 0
	for _, c := range l.order {
		if c.stack != nil && c.first > a && c.first < b {
			n++
		}
	}
	return n
}

// Outside is the class of a selected container with no open state.
func (l *Live) Outside() Class { return l.rules.Outside }

// Changes sweeps everything before w and calls fn at every change of the
// class count or of R (a container's first state), in time order, with the
// counts after it: the step function in continuous time, with no sampling.
// A container counts from its first state on. Changes(+Inf) at the end of
// input sweeps every state received. Do not mix with Advance on one Live.
func (l *Live) Changes(w float64, fn func(t float64, x, r int)) {
	first := l.sweep(w)
	if !l.started && !math.IsInf(first, 1) {
		l.t0, l.started = first, true
	}
	for _, ch := range l.changes {
		if l.apply(ch) {
			fn(ch.t, int(l.counts[l.class]), l.r)
		}
	}
}

// CountChanges is Changes with the counts of every class: fn gets, at
// every change of a count or of R, the counts after it (valid during the
// call). The HTML report draws every class's occupancy from them.
func (l *Live) CountChanges(w float64, fn func(t float64, counts *[NumClasses]int32, r int)) {
	first := l.sweep(w)
	if !l.started && !math.IsInf(first, 1) {
		l.t0, l.started = first, true
	}
	for _, ch := range l.changes {
		if l.apply(ch) {
			fn(ch.t, &l.counts, l.r)
		}
	}
}

// apply applies a change to the counts; false when it changes nothing (a
// container's first state, counted from the start already: FromStart).
func (l *Live) apply(ch change) bool {
	if ch.from == newContainer {
		if l.fixed {
			return false
		}
		l.r++
	} else {
		l.counts[ch.from]--
	}
	l.counts[ch.to]++
	return true
}

// End is the last state end received (−Inf before any).
func (l *Live) End() float64 { return l.end }

func (l *Live) set(c *liveCont, t float64, cl Class, v uint16) {
	if cl != c.cur {
		l.changes = append(l.changes, change{t: t, from: c.cur, to: cl, value: v, c: int32(len(l.runs) - 1)})
		c.cur = cl
	}
}

func (l *Live) closeUntil(c *liveCont, t float64) {
	for len(c.stack) > 0 && c.stack[len(c.stack)-1].end <= t {
		e := c.stack[len(c.stack)-1].end
		c.stack = c.stack[:len(c.stack)-1]
		top, v := l.rules.Outside, uint16(0)
		if len(c.stack) > 0 {
			top, v = c.stack[len(c.stack)-1].class, c.stack[len(c.stack)-1].value
		}
		l.set(c, e, top, v)
	}
}

// ContainerChange is one container's change of class. First marks a
// container's first state.
type ContainerChange struct {
	T         float64
	Container string
	Class     Class
	First     bool
	// Value is the container's innermost state's value after the change
	// ("" without KeepValues, outside any state, or past MaxValues).
	Value string
}

// ContainerChanges sweeps everything before w and calls fn at every change
// of a container's class, in time order, equal times in container-name
// order (the backfill engine follows each worker). A container's first
// state comes as a change to Outside with First set, then its own change.
// Do not mix with Changes or Advance on one Live.
func (l *Live) ContainerChanges(w float64, fn func(ContainerChange)) {
	first := l.sweep(w)
	if !l.started && !math.IsInf(first, 1) {
		l.t0, l.started = first, true
	}
	for _, ch := range l.changes {
		l.apply(ch)
		cc := ContainerChange{T: ch.t, Container: l.order[ch.c].name, Class: ch.to, First: ch.from == newContainer}
		if l.names != nil && ch.from != newContainer {
			cc.Value = l.names[ch.value]
		}
		fn(cc)
	}
}
