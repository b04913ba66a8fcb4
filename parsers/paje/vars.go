package paje

import (
	"math"
	"math/bits"

	"github.com/tracecast/tracecast"
)

// StarPU writes a worker's GFlop/s sample when the task ends, stamped with
// the task's start, after other samples of the same variable: the only place
// where real traces go back in time on one (container, type). With a reorder
// horizon, variable changes wait in their slot until they are older than the
// latest time seen minus the horizon, and are applied in time order.

type varChange struct {
	t, v float64
	// opLine is the event kind in the top byte and the line number below:
	// 24 bytes a sample rather than 32.
	opLine uint64
}

func newVarChange(t, v float64, op eventKind, line int64) varChange {
	return varChange{t: t, v: v, opLine: uint64(op)<<56 | uint64(line)&(1<<56-1)}
}

func (ch varChange) op() eventKind { return eventKind(ch.opLine >> 56) }
func (ch varChange) line() int64   { return int64(ch.opLine & (1<<56 - 1)) }

// bufferVar queues a variable change in time order and applies the ones
// that are now out of the horizon. Its common case, a change later than
// those queued in a slot with room, and nothing to apply yet, takes no
// call: a quarter of the StarPU trace's lines are variable changes
// (−22 M instructions on its 41 MB, −2–3% time).
func (s *sim) bufferVar(c *container, t *ptype, sl *slot, ch varChange) *simError {
	if ch.t < sl.vApplied {
		return fail("time order", "not time-ordered: variable "+quote(t.name)+" of container "+quote(c.name)+
			" set at "+fmtG(ch.t)+", after a change at "+fmtG(sl.vApplied)+" was applied"+s.orderHint(t))
	}
	n := len(sl.vbuf)
	if n == sl.vhead {
		// Empty: start over at the front, and be swept again.
		sl.vbuf, sl.vhead, n = sl.vbuf[:0], 0, 0
		s.vslots = append(s.vslots, sl)
	}
	if n == cap(sl.vbuf) {
		s.makeRoom(sl)
		n = len(sl.vbuf)
	}
	if n > sl.vhead && sl.vbuf[n-1].t > ch.t {
		s.insertLate(sl, ch)
	} else {
		sl.vbuf = sl.vbuf[:n+1]
		sl.vbuf[n] = ch
	}
	s.buffered++
	s.maxBuffered = max(s.maxBuffered, s.buffered)
	if sl.vbuf[sl.vhead].t <= s.maxLine-s.horizon {
		if err := s.flushVars(c, t, sl, s.maxLine-s.horizon); err != nil {
			return err
		}
	}
	// Now and then, flush the variables nobody writes to any more; and
	// keep the buffer bounded.
	if s.vsince++; s.vsince >= 4096 || s.buffered > s.opts.MaxBuffered {
		return s.sweepVars()
	}
	return nil
}

// minFreeVars is the smallest buffer makeRoom keeps for another slot:
// smaller ones are left to the collector, so that a stream whose variables
// stay small (one of many open at once) keeps no more than it holds
// (TestOpenStreamCost). The buffers a trace's variables outgrow on the way
// to thousands of changes are mostly larger.
const minFreeVars = 1024

// makeRoom makes room for one more change in a full slot: it drops the
// applied changes if any, so that the buffer grows with the changes held,
// not with those applied, and otherwise doubles it. (append's growth of
// large slices, 1.25 times at a step, allocates five times the final size
// on the way; a variable holding a whole trace's samples, the default
// horizon on a short trace, made 9.2 of the 25 MB a 41 MB trace
// allocated.) The buffer outgrown goes to a free list that another slot
// growing to its size takes, rather than to the collector, which rarely
// runs while a file is read: on the StarPU trace, 3.8 MB are allocated
// for variables instead of 6.5 MB, and 700 fewer pages are touched (−1%
// time). The free lists hold less than the buffers in use (a geometric
// series of their halves), which bytesPerBuffered counts.
func (s *sim) makeRoom(sl *slot) {
	if sl.vhead > 0 {
		n := copy(sl.vbuf, sl.vbuf[sl.vhead:])
		sl.vbuf, sl.vhead = sl.vbuf[:n], 0
		return
	}
	// 2 first: a trace may have many variables with a sample or two each.
	c := max(2, 2*cap(sl.vbuf))
	var grown []varChange
	if k := bits.Len(uint(c)) - 1; k < len(s.vfree) && len(s.vfree[k]) > 0 {
		free := s.vfree[k]
		grown = free[len(free)-1][:len(sl.vbuf)]
		free[len(free)-1] = nil
		s.vfree[k] = free[:len(free)-1]
	} else {
		grown = make([]varChange, len(sl.vbuf), c)
	}
	copy(grown, sl.vbuf)
	if c := cap(sl.vbuf); c >= minFreeVars {
		k := bits.Len(uint(c)) - 1 // c is a power of two
		if k >= len(s.vfree) {
			s.vfree = append(s.vfree, make([][][]varChange, k+1-len(s.vfree))...)
		}
		s.vfree[k] = append(s.vfree[k], sl.vbuf[:0])
	}
	sl.vbuf = grown
}

// insertLate puts a change earlier than the last one queued in its place
// in time order, after the changes at the same time (a slot with room).
func (s *sim) insertLate(sl *slot, ch varChange) {
	i := len(sl.vbuf)
	for i > sl.vhead && sl.vbuf[i-1].t > ch.t {
		i--
	}
	s.late++
	sl.vbuf = append(sl.vbuf, varChange{})
	copy(sl.vbuf[i+1:], sl.vbuf[i:])
	sl.vbuf[i] = ch
}

// sweepVars applies the queued changes of every variable up to the
// horizon (all of them when more than MaxBuffered are held), and forgets
// the slots left empty.
func (s *sim) sweepVars() *simError {
	s.vsince = 0
	th := s.maxLine - s.horizon
	if s.buffered > s.opts.MaxBuffered {
		th = s.maxLine // over the bound: apply everything now
	}
	kept := s.vslots[:0]
	var first *simError
	for _, v := range s.vslots {
		if err := s.flushVars(v.c, v.t, v, th); err != nil && first == nil {
			first = err
		}
		if len(v.vbuf) > v.vhead {
			kept = append(kept, v)
		}
	}
	clear(s.vslots[len(kept):])
	s.vslots = kept
	return first
}

// flushVars applies the slot's queued changes up to time th.
func (s *sim) flushVars(c *container, t *ptype, sl *slot, th float64) *simError {
	h := sl.vhead
	var err *simError
	for h < len(sl.vbuf) && sl.vbuf[h].t <= th {
		err = s.applyVar(c, t, sl, sl.vbuf[h])
		h++
		if err != nil {
			break
		}
		if s.drain != nil && len(s.out) >= BatchSize && s.drain() != nil {
			s.halted = true
		}
	}
	s.buffered -= h - sl.vhead
	sl.vhead = h
	// Reclaim the applied prefix once it is most of the buffer.
	if h > 64 && 2*h > len(sl.vbuf) {
		n := copy(sl.vbuf, sl.vbuf[h:])
		sl.vbuf, sl.vhead = sl.vbuf[:n], 0
	}
	return err
}

// applyVar applies one Set/Add/SubVariable, like pajeng: a change at the
// time the current piece started replaces its value.
func (s *sim) applyVar(c *container, t *ptype, sl *slot, ch varChange) *simError {
	sl.vApplied = ch.t
	var extra []tracecast.Field
	if len(s.varExtras) > 0 {
		extra = s.varExtras[ch.line()]
		delete(s.varExtras, ch.line())
	}
	v := ch.v
	if ch.op() != evSetVariable {
		if !sl.hasVar {
			what := "addition to"
			if ch.op() == evSubVariable {
				what = "subtraction from"
			}
			return &simError{kind: "variable", line: ch.line(), reason: "illegal " + what + " variable " + quote(t.name) +
				" of container " + quote(c.name) + " that has no value yet"}
		}
		if ch.op() == evSubVariable {
			v = -v
		}
		v += sl.varValue
		if math.IsInf(v, 0) {
			return &simError{kind: "bad number", line: ch.line(), reason: "variable " + quote(t.name) + " of container " + quote(c.name) + " overflows"}
		}
	}
	if !sl.hasVar || sl.varStart != ch.t {
		s.varPiece(c, t, sl, ch.t)
		// A new piece has the user-defined fields of the change that
		// began it; a change at its start only updates its value.
		sl.hasVar, sl.varStart = true, ch.t
		if extra != nil || sl.varExtra != nil { // -u only: no pointer store otherwise
			sl.varExtra = extra
		}
	}
	sl.varValue = v
	return nil
}
