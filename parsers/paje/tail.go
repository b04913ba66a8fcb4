package paje

import (
	"bytes"
	"math"
)

// TailTime is the latest time among the complete event lines of tail, a
// piece of a trace's end, read with the event definitions of head, the
// trace's beginning (its header, up to the first event line, must be in
// it). It is a guess for a caller that will check it (the report's
// single pass: the run's end before the run is read): lines it cannot
// read are passed over, not judged, and the first line of tail is taken
// as cut. ok is false when head holds no complete header or no line of
// tail has a time.
func TailTime(head, tail []byte, noStrict bool) (t float64, ok bool) {
	h := newHeader(noStrict)
	var toks []token
	var num int64
	for len(head) > 0 {
		i := bytes.IndexByte(head, '\n')
		if i < 0 {
			return 0, false // the header goes on past head
		}
		line := head[:i]
		head = head[i+1:]
		num++
		var r string
		toks, r = tokenize(line, toks)
		if r != "" || len(toks) == 0 {
			continue
		}
		if toks[0].b[0] != '%' || toks[0].quoted() {
			break // the first event line
		}
		if h.line(toks, num) != "" {
			return 0, false
		}
	}
	if h.cur != nil || len(h.defs) == 0 {
		return 0, false
	}
	if i := bytes.IndexByte(tail, '\n'); i >= 0 {
		tail = tail[i+1:]
	} else {
		return 0, false
	}
	t = math.Inf(-1)
	for len(tail) > 0 {
		i := bytes.IndexByte(tail, '\n')
		if i < 0 {
			break // the last line is whole only with its newline
		}
		line := tail[:i]
		tail = tail[i+1:]
		var r string
		toks, r = tokenize(line, toks)
		if r != "" || len(toks) == 0 {
			continue
		}
		d := h.lookup(toks[0].b)
		if d == nil || len(toks)-1 != d.nfields || d.idx[fTime] < 0 {
			continue
		}
		if v, good := parseFloat(toks[1+d.idx[fTime]].b); good && v <= MaxTime && v > t {
			t, ok = v, true
		}
	}
	return t, ok
}
