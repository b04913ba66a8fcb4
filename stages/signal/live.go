package signal

import (
	"math"
	"sort"

	"github.com/tracecast/tracecast"
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
	rules   *Rules
	class   Class
	period  float64
	conts   map[string]*liveCont
	counts  [NumClasses]int32
	r       int
	t0      float64
	started bool
	k       int
	swept   float64 // changes before this time are applied
	changes []change
	end     float64
	// noMerge holds every state as its own span (tests compare with it).
	noMerge bool
}

type liveCont struct {
	buf []span // received, not yet swept
	// last0 is the index in buf of the last state at the lowest level
	// (imbrication 0), -1 if none.
	last0 int
	stack []span
	cur   Class
	first float64 // start of its first state (once swept)
	// unsorted: buf is not in (start, imbrication) order. States mostly
	// arrive in order; sorting only then keeps Advance cheap when it is
	// called for every few lines.
	unsorted bool
}

// NewLive returns a live sampler of class c at period (trace units).
func NewLive(r *Rules, c Class, period float64) *Live {
	return &Live{rules: r, class: c, period: period, conts: make(map[string]*liveCont), swept: math.Inf(-1), end: math.Inf(-1)}
}

// R is the number of selected containers seen so far.
func (l *Live) R() int { return l.r }

// RBefore is the number of selected containers whose first state starts
// before t. Once the watermark passed t it no longer changes, whatever the
// batches the input came in: a deterministic R for the engines (R() at the
// first sample depends on how far the first batch reached).
func (l *Live) RBefore(t float64) int {
	n := 0
	for _, c := range l.conts {
		if c.stack != nil && c.first < t {
			n++
		}
	}
	return n
}

// Started reports whether a sample was produced (T0 is known).
func (l *Live) Started() bool { return l.started }

// T0 is the first state start (valid once a sample was produced).
func (l *Live) T0() float64 { return l.t0 }

// Add takes a batch of entities.
func (l *Live) Add(es []tracecast.Entity) {
	for i := range es {
		e := &es[i]
		if e.Nature != tracecast.NatureState || e.Type != l.rules.StateType {
			continue
		}
		c := l.conts[e.Container]
		if c == nil {
			c = &liveCont{cur: l.rules.Outside, last0: -1}
			l.conts[e.Container] = c
		}
		sp := span{e.Start, e.End, int32(e.Imbrication), l.rules.Classify(e.Value)}
		l.end = math.Max(l.end, e.End)
		// A state at the lowest level, in the Outside class, that starts
		// where the previous one at that level ends extends it: swept one
		// after the other, the two change no count and no class (between
		// them the container is in Outside too, and nothing lies below
		// level 0; the states received in between lie above), so samples
		// and changes are the same. A StarPU worker's runs of Sleeping,
		// Scheduling, Overhead... states (pushed ones too), most of a
		// trace's states, are held as one span each while the watermark
		// lags.
		if j := c.last0; j >= 0 && !l.noMerge && sp.imb == 0 && sp.class == l.rules.Outside {
			// The states received since the last one at level 0 closed
			// before sp, within it (a container's states come as they
			// end): above it. If all are in Outside, none can show
			// (Outside over Outside), nor change a count: drop them.
			nested := c.buf[j+1:]
			for _, n := range nested {
				if n.class != l.rules.Outside || n.imb == 0 || n.start < sp.start || n.end > sp.end {
					nested = nil
					break
				}
			}
			if len(nested) > 0 {
				c.buf = c.buf[:j+1]
			}
			if c.buf[j].class == sp.class && c.buf[j].end == sp.start {
				c.buf[j].end = sp.end
				continue
			}
		}
		if n := len(c.buf); n > 0 && (sp.start < c.buf[n-1].start || sp.start == c.buf[n-1].start && sp.imb < c.buf[n-1].imb) {
			c.unsorted = true
		}
		if sp.imb == 0 {
			c.last0 = len(c.buf)
		}
		c.buf = append(c.buf, sp)
	}
}

// Buffered is the number of spans received and not yet swept (what the
// watermark's lag costs: about 24 bytes each).
func (l *Live) Buffered() int {
	n := 0
	for _, c := range l.conts {
		n += len(c.buf)
	}
	return n
}

// newContainer marks a change that is a container's first state: from then
// on it counts (in Outside until its state's own change applies).
const newContainer Class = NumClasses

// sweep moves the states that start before w from the containers' buffers
// onto their stacks, collecting the class changes before w in l.changes
// (sorted by time), and returns the earliest state start swept.
func (l *Live) sweep(w float64) float64 {
	l.changes = l.changes[:0]
	names := make([]string, 0, len(l.conts))
	for n := range l.conts {
		names = append(names, n)
	}
	sort.Strings(names) // a deterministic order for equal times
	first := math.Inf(1)
	for _, n := range names {
		c := l.conts[n]
		if c.unsorted {
			sort.SliceStable(c.buf, func(i, j int) bool {
				if c.buf[i].start != c.buf[j].start {
					return c.buf[i].start < c.buf[j].start
				}
				return c.buf[i].imb < c.buf[j].imb
			})
			c.unsorted = false
			c.last0 = -1 // moved: the next one starts a new span
		}
		i := 0
		for ; i < len(c.buf) && c.buf[i].start < w; i++ {
			s := c.buf[i]
			first = math.Min(first, s.start)
			if c.stack == nil { // first state of this container: it counts from now on
				c.first = s.start
				l.changes = append(l.changes, change{s.start, newContainer, l.rules.Outside})
				c.stack = make([]span, 0, 4)
			}
			l.closeUntil(c, s.start)
			// A state at a lower or equal level replaces those above it.
			for len(c.stack) > 0 && c.stack[len(c.stack)-1].imb >= s.imb {
				c.stack = c.stack[:len(c.stack)-1]
			}
			c.stack = append(c.stack, s)
			l.set(c, s.start, s.class)
		}
		c.buf = append(c.buf[:0], c.buf[i:]...)
		if c.last0 -= i; c.last0 < 0 {
			c.last0 = -1 // swept: it can no longer grow
		}
		l.closeUntil(c, w)
	}
	sort.SliceStable(l.changes, func(i, j int) bool { return l.changes[i].t < l.changes[j].t })
	return first
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
		for {
			tk := l.t0 + float64(l.k)*l.period
			if tk >= t || tk >= final {
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
		if ch.from == newContainer {
			l.r++
		} else {
			l.counts[ch.from]--
		}
		l.counts[ch.to]++
	}
	sampleUntil(final)
}

// StartedWithin counts the selected containers whose first state starts in
// (a, b): those a sample at a did not count yet. The offline signal counts
// every container from t_0, in the rules' Outside class before its first
// state; a live sampler that fixes R at b corrects its samples before b
// with it.
func (l *Live) StartedWithin(a, b float64) int {
	n := 0
	for _, c := range l.conts {
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
		if ch.from == newContainer {
			l.r++
		} else {
			l.counts[ch.from]--
		}
		l.counts[ch.to]++
		fn(ch.t, int(l.counts[l.class]), l.r)
	}
}

// End is the last state end received (−Inf before any).
func (l *Live) End() float64 { return l.end }

func (l *Live) set(c *liveCont, t float64, cl Class) {
	if cl != c.cur {
		l.changes = append(l.changes, change{t, c.cur, cl})
		c.cur = cl
	}
}

func (l *Live) closeUntil(c *liveCont, t float64) {
	for len(c.stack) > 0 && c.stack[len(c.stack)-1].end <= t {
		e := c.stack[len(c.stack)-1].end
		c.stack = c.stack[:len(c.stack)-1]
		top := l.rules.Outside
		if len(c.stack) > 0 {
			top = c.stack[len(c.stack)-1].class
		}
		l.set(c, e, top)
	}
}
