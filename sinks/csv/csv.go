// Package csv writes records as RFC 4180 CSV with a header row: the "csv"
// sink. Resolved Paje entities are one table for all natures, the columns
// that do not apply left empty; unlike pj_dump's comma-separated lines,
// values holding commas, quotes or newlines are quoted, so any CSV reader
// (R, pandas, DuckDB) loads it. Signal samples are k,t,x rows.
package csv

import (
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tracecast/tracecast"
)

// Header is the header row.
var Header = []string{"nature", "container", "type", "start", "end", "duration", "imbrication",
	"value", "number", "start_container", "end_container", "key", "extra"}

// Writer writes entities as CSV. Rows are formatted straight into its
// buffer (numbers without an intermediate string), which goes to the
// underlying writer when full: the bytes encoding/csv would write (its
// quoting rules, "\n" line ends), several times faster.
type Writer struct {
	w      io.Writer
	buf    []byte
	header bool
	err    error
}

// bufSize is the Writer's buffer; a row longer than the rest of it grows
// the buffer once, to be written at once.
const bufSize = 1 << 16

// NewWriter returns a CSV writer on w; the header is written before the
// first row.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: w, buf: make([]byte, 0, bufSize)}
}

// num is f with the shortest decimal that reads back exactly.
func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// appendNum appends f with the shortest decimal that reads back exactly.
func appendNum(b []byte, f float64) []byte { return strconv.AppendFloat(b, f, 'f', -1, 64) }

// appendField appends a field as encoding/csv.Writer writes it: quoted,
// with its quotes doubled, when it holds a comma, a quote, a carriage
// return or a newline, starts with a space (Unicode's) or is \.; as is
// otherwise.
func appendField(b []byte, s string) []byte {
	if !needsQuotes(s) {
		return append(b, s...)
	}
	b = append(b, '"')
	for {
		i := strings.IndexByte(s, '"')
		if i < 0 {
			break
		}
		b = append(b, s[:i+1]...)
		b = append(b, '"')
		s = s[i+1:]
	}
	b = append(b, s...)
	return append(b, '"')
}

// needsQuotes is encoding/csv's fieldNeedsQuotes for a comma separator.
func needsQuotes(s string) bool {
	if s == "" {
		return false
	}
	if s == `\.` {
		return true
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ',', '"', '\r', '\n':
			return true
		}
	}
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsSpace(r)
}

func (w *Writer) writeHeader() {
	if w.header {
		return
	}
	w.header = true
	for i, h := range Header {
		if i > 0 {
			w.buf = append(w.buf, ',')
		}
		w.buf = appendField(w.buf, h)
	}
	w.buf = append(w.buf, '\n')
}

// Write writes one row per entity. Times are in the trace's unit, with the
// shortest decimal that reads back exactly; extra is a JSON object of the
// user-defined fields, empty when there are none.
func (w *Writer) Write(es []tracecast.Entity) error {
	w.writeHeader()
	for i := range es {
		if w.err != nil {
			return w.err
		}
		w.buf = w.appendRow(w.buf, &es[i])
		if len(w.buf) >= bufSize-1024 {
			w.flush()
		}
	}
	return w.err
}

// appendRow appends e's row: nature, container, type, start, end,
// duration, imbrication (states), value (not variables), number
// (variables), start_container, end_container, key (links), extra.
func (w *Writer) appendRow(b []byte, e *tracecast.Entity) []byte {
	b = append(b, e.Nature.String()...)
	b = append(b, ',')
	b = appendField(b, e.Container)
	b = append(b, ',')
	b = appendField(b, e.Type)
	b = append(b, ',')
	b = appendNum(b, e.Start)
	b = append(b, ',')
	b = appendNum(b, e.End)
	b = append(b, ',')
	b = appendNum(b, e.End-e.Start)
	b = append(b, ',')
	if e.Nature == tracecast.NatureState {
		b = strconv.AppendInt(b, int64(e.Imbrication), 10)
	}
	b = append(b, ',')
	if e.Nature != tracecast.NatureVariable {
		b = appendField(b, e.Value)
	}
	b = append(b, ',')
	if e.Nature == tracecast.NatureVariable {
		b = appendNum(b, e.Number)
	}
	b = append(b, ',')
	if e.Nature == tracecast.NatureLink {
		b = appendField(b, e.StartContainer())
		b = append(b, ',')
		b = appendField(b, e.EndContainer())
		b = append(b, ',')
		b = appendField(b, e.Key())
	} else {
		b = append(b, ",,"...)
	}
	b = append(b, ',')
	if len(e.Extra()) > 0 {
		m := make(map[string]string, len(e.Extra()))
		for _, f := range e.Extra() {
			m[f.Name] = f.Value
		}
		js, _ := json.Marshal(m)
		b = appendField(b, string(js))
	}
	return append(b, '\n')
}

func (w *Writer) flush() {
	if w.err == nil && len(w.buf) > 0 {
		_, w.err = w.w.Write(w.buf)
	}
	w.buf = w.buf[:0]
	if cap(w.buf) > 4*bufSize {
		w.buf = make([]byte, 0, bufSize)
	}
}

// Flush writes buffered rows (the header, if nothing was written) and
// reports any write error.
func (w *Writer) Flush() error {
	w.writeHeader()
	w.flush()
	return w.err
}
