package power

import (
	"bytes"
	"strconv"

	"github.com/tracecast/tracecast/internal/lineerr"
)

// maxDepth bounds the nesting of brackets inside one array element, as
// encoding/json bounds it (10 000): the scanner's stack stays small even
// for an element it drops.
const maxDepth = 10000

type docState uint8

const (
	docStart docState = iota // before '['
	docFirst                 // after '[': an element or ']'
	docValue                 // after ',': an element
	docElem                  // inside an element
	docNext                  // after an element: ',' or ']'
	docEnd                   // after ']': only whitespace
)

// document frames the elements of a JSON array — Kwollect's answer — as
// its bytes stream in, holding one element at a time: a document of
// gigabytes is read in the memory of its largest record (at most
// Options.MaxLineBytes). It checks the array's own syntax (the brackets,
// commas and strings that delimit elements) and hands each element to the
// record parser, which checks the element itself with encoding/json's rules
// (or its fast path, which decides the same).
//
// A bad element (not an object, bad JSON, a bad time or value, longer than
// MaxLineBytes) is a bad record: an error naming the line it starts on, or
// a counted skip in lenient mode. A broken array (a missing comma,
// mismatched brackets, nesting deeper than 10 000, data after the closing
// ']', a document that ends before it) is an error in both modes: nothing
// after that point can be trusted.
type document struct {
	rd    *reader
	max   int
	state docState
	line  int64 // line of the next byte, 1-based
	last  int64 // line of the last byte of the input so far
	elem  []byte
	start int64  // line where elem starts
	stack []byte // closing brackets expected inside the element
	inStr bool
	esc   bool
	// scalar: the element is a bare number or literal, which ends at
	// whitespace, ',' or ']'.
	scalar bool
	// drop: the element is longer than max; it is scanned to its end but
	// not kept.
	drop bool
}

func newDocument(rd *reader) *document {
	return &document{rd: rd, max: rd.opts.MaxLineBytes, line: 1}
}

// broken is an error in the array's syntax at the current line.
func (d *document) broken(reason string) error {
	return &Error{File: d.rd.opts.Name, Line: d.line, Kind: "json", Reason: "broken JSON array: " + reason}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// feed scans the next bytes of the document.
func (d *document) feed(b []byte) error {
	if n := len(b); n > 0 {
		defer func() {
			if d.last = d.line; b[n-1] == '\n' {
				d.last--
			}
		}()
	}
	for i := 0; i < len(b); {
		c := b[i]
		switch d.state {
		case docElem:
			j, err := d.scanElem(b, i)
			if err != nil {
				return err
			}
			i = j
			continue
		case docStart, docFirst, docValue, docNext, docEnd:
			if isSpace(c) {
				if c == '\n' {
					d.line++
				}
				i++
				continue
			}
		}
		switch d.state {
		case docStart:
			if c != '[' {
				return d.broken("the document does not start with '['")
			}
			d.state = docFirst
			i++
		case docFirst, docValue:
			if c == ']' && d.state == docFirst {
				d.state = docEnd
				i++
				continue
			}
			if c == ',' || c == ']' || c == '}' || c == ':' {
				return d.broken("expected an element, found " + lineerr.QuoteBytes(b[i:i+1]))
			}
			d.state, d.start = docElem, d.line
			d.elem, d.drop, d.stack, d.inStr, d.esc = d.elem[:0], false, d.stack[:0], false, false
			d.scalar = c != '{' && c != '[' && c != '"'
			// scanElem sees the element's first byte.
		case docNext:
			switch c {
			case ',':
				d.state = docValue
			case ']':
				d.state = docEnd
			default:
				return d.broken("expected ',' or ']' after an element, found " + lineerr.QuoteBytes(b[i:min(i+1, len(b))]))
			}
			i++
		case docEnd:
			return d.broken("data after the closing ']'")
		}
	}
	return nil
}

// scanElem scans the element from b[i] and returns where it stopped: at the
// end of b, or just after the element (the element was handed over).
func (d *document) scanElem(b []byte, i int) (int, error) {
	seg := i // b[seg:] is part of the element
	done := false
	for i < len(b) && !done {
		c := b[i]
		switch {
		case d.esc:
			d.esc = false
			if c == '\n' {
				d.line++
			}
			i++
		case d.inStr:
			// Jump to the next byte that matters in a string.
			j := bytes.IndexAny(b[i:], "\"\\\n")
			if j < 0 {
				i = len(b)
				continue
			}
			i += j
			switch b[i] {
			case '\n':
				d.line++ // invalid in a string: encoding/json says so
			case '\\':
				if i+1 < len(b) {
					if b[i+1] == '\n' {
						d.line++
					}
					i++
				} else {
					d.esc = true
				}
			case '"':
				d.inStr = false
				done = len(d.stack) == 0 // a string element
			}
			i++
		case d.scalar:
			if isSpace(c) || c == ',' || c == ']' {
				done = true // the delimiter is the array's
				continue
			}
			if c == '{' || c == '[' || c == '"' || c == '}' {
				return i, d.broken("unexpected " + lineerr.QuoteBytes(b[i:i+1]) + " in an element")
			}
			i++
		default:
			switch c {
			case '\n':
				d.line++
			case '"':
				d.inStr = true
			case '{', '[':
				if len(d.stack) >= maxDepth {
					return i, d.broken("nested deeper than " + strconv.Itoa(maxDepth))
				}
				d.stack = append(d.stack, c+2) // '}' is '{'+2, ']' is '['+2
			case '}', ']':
				if n := len(d.stack); n == 0 || d.stack[n-1] != c {
					return i, d.broken("mismatched " + lineerr.QuoteBytes(b[i:i+1]))
				}
				d.stack = d.stack[:len(d.stack)-1]
				done = len(d.stack) == 0
			}
			i++
		}
	}
	if !d.drop {
		if len(d.elem)+i-seg > d.max {
			d.drop, d.elem = true, d.elem[:0]
		} else {
			d.elem = append(d.elem, b[seg:i]...)
		}
	}
	if !done {
		return i, nil
	}
	d.state = docNext
	var err error
	if d.drop {
		err = d.rd.bad(d.start, "record too long", "record longer than "+strconv.Itoa(d.max)+" bytes (raise max_line_bytes)")
	} else {
		err = d.rd.element(d.elem, d.start)
	}
	d.elem = d.elem[:0]
	if cap(d.elem) > 1<<16 {
		d.elem = nil // a rare large record does not stay allocated
	}
	return i, err
}

// newline is what feedLine adds after each line.
var newline = []byte{'\n'}

// feedLine scans one line of the document (without its terminator), line
// num of the stream.
func (d *document) feedLine(b []byte, num int64) error {
	d.line = num
	if err := d.feed(b); err != nil {
		return err
	}
	err := d.feed(newline)
	d.last = num
	return err
}

// end checks the document is complete. An empty input (no '[') is an
// empty document.
func (d *document) end() error {
	switch d.state {
	case docStart, docEnd:
		return nil
	}
	d.line = max(d.last, 1)
	return d.broken("the input ends before the closing ']' (a truncated download?)")
}

// element parses one element of the array: a record.
func (rd *reader) element(b []byte, num int64) error {
	if len(b) == 0 || b[0] != '{' {
		return rd.bad(num, "json", "an array element is not an object: "+lineerr.QuoteBytes(b))
	}
	return rd.jsonLine(b, num)
}
