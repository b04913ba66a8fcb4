package paje

import (
	"sort"
	"strconv"
)

// Error is a problem with one line of a trace. Its text is "FILE:LINE: reason",
// the shape compilers use, so editors can jump to it.
type Error struct {
	File   string
	Line   int64 // 0 when the problem is not tied to a line (end of trace)
	Kind   string
	Reason string
}

func (e *Error) Error() string {
	if e.Line == 0 {
		return e.File + ": " + e.Reason
	}
	return e.File + ":" + strconv.FormatInt(e.Line, 10) + ": " + e.Reason
}

// Stats counts what the parser read and, in lenient mode, what it skipped.
type Stats struct {
	Lines    int64
	Events   int64
	Entities int64
	// Late counts variable samples that came after a later sample of
	// the same variable and were put back in order.
	Late int64
	// Skipped counts skipped lines by reason (lenient mode).
	Skipped map[string]int64
	// MaxBuffered is the largest number of variable samples held at once.
	MaxBuffered int
	// QuirksInexact is set when, with PjdumpQuirks, the trace ended more
	// than the holding time before its latest time, so some entities pj_dump
	// would drop were already emitted.
	QuirksInexact bool
}

// SkippedTotal is the number of skipped lines over all reasons.
func (s *Stats) SkippedTotal() int64 {
	var n int64
	for _, v := range s.Skipped {
		n += v
	}
	return n
}

// SkippedReasons returns the reasons in a stable order.
func (s *Stats) SkippedReasons() []string {
	r := make([]string, 0, len(s.Skipped))
	for k := range s.Skipped {
		r = append(r, k)
	}
	sort.Strings(r)
	return r
}
