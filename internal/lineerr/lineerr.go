// Package lineerr is what every tracecast parser reports about bad input:
// an error naming the file, the line and the reason ("FILE:LINE: reason",
// the shape compilers use, so editors jump to it), and in lenient mode the
// count of skipped lines by reason.
package lineerr

import (
	"sort"
	"strconv"
	"unicode/utf8"
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

// MaxQuote is the most bytes of an offending token an error message
// quotes, escapes included: enough to recognise it, never the whole of a
// hostile line.
const MaxQuote = 100

// Quote returns s in double quotes with Go escapes, cut after MaxQuote
// bytes of quoted text (on a character boundary) with "…" when it is
// longer.
func Quote(s string) string {
	if len(s) <= MaxQuote/4 {
		return strconv.Quote(s)
	}
	b := make([]byte, 0, MaxQuote+8)
	b = append(b, '"')
	for i := 0; i < len(s); {
		_, size := utf8.DecodeRuneInString(s[i:])
		q := strconv.Quote(s[i : i+size])
		q = q[1 : len(q)-1]
		if len(b)-1+len(q) > MaxQuote {
			return string(append(b, "…\""...))
		}
		b = append(b, q...)
		i += size
	}
	return string(append(b, '"'))
}

// QuoteBytes is Quote for a byte slice, converting only what it quotes.
func QuoteBytes(b []byte) string {
	if len(b) > MaxQuote+utf8.UTFMax {
		b = b[:MaxQuote+utf8.UTFMax] // Quote adds the "…"
	}
	return Quote(string(b))
}

// Cut returns s cut to its first MaxQuote bytes, on a UTF-8 boundary, with
// "…" appended when something was cut: for messages that quote valid text
// their own way.
func Cut(s string) string {
	if len(s) <= MaxQuote {
		return s
	}
	n := MaxQuote
	for n > MaxQuote-utf8.UTFMax && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// Detail is an underlying error's text for a message (a JSON or CSV
// decoder's, which may echo a whole token), cut to 2 × MaxQuote bytes.
func Detail(err error) string {
	s := err.Error()
	if len(s) <= 2*MaxQuote {
		return s
	}
	n := 2 * MaxQuote
	for n > 2*MaxQuote-utf8.UTFMax && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
