package paje

import (
	"math"

	"github.com/tracecast/tracecast"
)

// pj_dump does not print every entity it builds: for each (container, type)
// it prints those whose start lies in [0, END) — END being the time of the
// last event line, in file order — plus the last one before 0 and the first
// one at or after END (a binary search widened by one on each side). With
// Options.PjdumpQuirks the parser applies the same window, so that its output
// is pj_dump's line for line. Entities that might fall outside it (those
// starting before 0, or within quirkWindow of the latest time seen) are held
// until the end of the trace; the rest go out at once.

type compatSlot struct {
	neg    tracecast.Entity
	negSeq uint64
	hasNeg bool
}

type heldEntity struct {
	e   tracecast.Entity
	sl  *slot
	seq uint64
}

// emit hands a completed entity on, through the pj_dump window when asked.
func (s *sim) emit(sl *slot, e tracecast.Entity) {
	if !s.opts.PjdumpQuirks {
		s.out = append(s.out, e)
		return
	}
	switch {
	case e.Start < 0:
		if !sl.compat.hasNeg {
			s.negSlots = append(s.negSlots, sl)
		}
		if !sl.compat.hasNeg || s.seq > sl.compat.negSeq {
			sl.compat.neg, sl.compat.negSeq, sl.compat.hasNeg = e, s.seq, true
		}
	case e.Start >= s.maxLine-s.quirkWindow:
		s.held = append(s.held, heldEntity{e: e, sl: sl, seq: s.seq})
		if len(s.held) >= 2*s.heldFloor {
			s.releaseHeld()
		}
	default:
		s.out = append(s.out, e)
	}
}

// releaseHeld lets go of held entities that are now safely inside the window.
func (s *sim) releaseHeld() {
	th := s.maxLine - s.quirkWindow
	kept := s.held[:0]
	for _, h := range s.held {
		if h.e.Start < th {
			s.out = append(s.out, h.e)
		} else {
			kept = append(kept, h)
		}
	}
	clear(s.held[len(kept):])
	s.held = kept
	s.heldFloor = max(1024, len(kept))
}

// finishQuirks applies the window with the final END to what is held.
func (s *sim) finishQuirks(end float64) {
	first := make(map[*slot]uint64)
	for _, h := range s.held {
		if h.e.Start >= end || math.IsNaN(end) {
			if f, ok := first[h.sl]; !ok || h.seq < f {
				first[h.sl] = h.seq
			}
		}
	}
	for _, sl := range s.negSlots {
		s.out = append(s.out, sl.compat.neg)
	}
	for _, h := range s.held {
		if h.e.Start < end || first[h.sl] == h.seq {
			s.out = append(s.out, h.e)
		}
	}
	s.held, s.negSlots = nil, nil
}
