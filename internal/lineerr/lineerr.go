// Package lineerr is what every tracecast parser reports about bad input:
// an error naming the file, the line and the reason ("FILE:LINE: reason",
// the shape compilers use, so editors jump to it), and in lenient mode the
// count of skipped lines by reason.
package lineerr

import (
	"sort"
	"strconv"
)

// Error is a problem with one line of input.
type Error struct {
	File   string
	Line   int64 // 0 when the problem is not tied to a line (end of input)
	Kind   string
	Reason string
}

func (e *Error) Error() string {
	if e.Line == 0 {
		return e.File + ": " + e.Reason
	}
	return e.File + ":" + strconv.FormatInt(e.Line, 10) + ": " + e.Reason
}

// Skipped counts skipped lines by reason.
type Skipped map[string]int64

// Total is the number of skipped lines over all reasons.
func (s Skipped) Total() int64 {
	var n int64
	for _, v := range s {
		n += v
	}
	return n
}

// Reasons returns the reasons in a stable order.
func (s Skipped) Reasons() []string {
	r := make([]string, 0, len(s))
	for k := range s {
		r = append(r, k)
	}
	sort.Strings(r)
	return r
}
