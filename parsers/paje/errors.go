package paje

import "github.com/tracecast/tracecast/internal/lineerr"

// Error is a problem with one line of a trace: "FILE:LINE: reason".
type Error = lineerr.Error

// Stats counts what the parser read and, in lenient mode, what it skipped.
type Stats struct {
	Lines    int64
	Events   int64
	Entities int64
	// Late counts variable samples that came after a later sample of
	// the same variable and were put back in order.
	Late int64
	// Skipped counts skipped lines by reason (lenient mode).
	Skipped lineerr.Skipped
	// MaxBuffered is the largest number of variable samples held at once.
	MaxBuffered int
	// QuirksInexact is set when, with PjdumpQuirks, the trace ended more
	// than the holding time before its latest time, so some entities pj_dump
	// would drop were already emitted.
	QuirksInexact bool
}

// QuirksInexactMessage explains Stats.QuirksInexact to a user.
const QuirksInexactMessage = "the trace's last line is more than 0.1 s of trace time before its latest event: pj_dump drops the entities that start after the last line's time (but the first of each container and type); this output, which streams, had already printed some of them, so it has more lines than pj_dump's near the end"
