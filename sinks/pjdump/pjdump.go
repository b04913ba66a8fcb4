// Package pjdump writes resolved Paje entities as text: the line format of
// pajeng's pj_dump (so existing scripts keep working) and real CSV with a
// header row.
package pjdump

import (
	"bufio"
	"io"
	"strconv"

	"github.com/tracecast/tracecast"
)

// AppendLine appends e in pj_dump's format, without the newline. Times use
// six decimals, except on Container lines where pj_dump prints C++'s default
// six significant digits. With userDefined, extra fields follow, as pj_dump -u
// prints them.
func AppendLine(b []byte, e *tracecast.Entity, userDefined bool) []byte {
	b = append(b, e.Nature.String()...)
	b = append(b, ", "...)
	b = append(b, e.Container...)
	b = append(b, ", "...)
	b = append(b, e.Type...)
	switch e.Nature {
	case tracecast.NatureContainer:
		b = appendG(b, e.Start)
		b = appendG(b, e.End)
		b = appendG(b, e.End-e.Start)
		b = append(b, ", "...)
		b = append(b, e.Value...)
	case tracecast.NatureState:
		b = appendF(b, e.Start)
		b = appendF(b, e.End)
		b = appendF(b, e.End-e.Start)
		b = appendF(b, float64(e.Imbrication))
		b = append(b, ", "...)
		b = append(b, e.Value...)
	case tracecast.NatureVariable:
		b = appendF(b, e.Start)
		b = appendF(b, e.End)
		b = appendF(b, e.End-e.Start)
		b = appendF(b, e.Number)
	case tracecast.NatureEvent:
		b = appendF(b, e.Start)
		b = append(b, ", "...)
		b = append(b, e.Value...)
	case tracecast.NatureLink:
		b = appendF(b, e.Start)
		b = appendF(b, e.End)
		b = appendF(b, e.End-e.Start)
		b = append(b, ", "...)
		b = append(b, e.Value...)
		b = append(b, ", "...)
		b = append(b, e.StartContainer...)
		b = append(b, ", "...)
		b = append(b, e.EndContainer...)
		b = append(b, ", "...)
		b = append(b, e.Key...)
	}
	if userDefined {
		for _, f := range e.Extra {
			b = append(b, ", "...)
			b = append(b, f.Value...)
		}
	}
	return b
}

func appendF(b []byte, f float64) []byte {
	b = append(b, ", "...)
	return appendFixed6(b, f)
}

// appendG formats like a C++ ostream with its default precision (%g with 6
// significant digits).
func appendG(b []byte, f float64) []byte {
	b = append(b, ", "...)
	return strconv.AppendFloat(b, f, 'g', 6, 64)
}

// Writer writes entities in pj_dump format to a buffered writer.
type Writer struct {
	w           *bufio.Writer
	buf         []byte
	userDefined bool
}

// NewWriter returns a pj_dump-format writer on w.
func NewWriter(w io.Writer, userDefined bool) *Writer {
	return &Writer{w: bufio.NewWriterSize(w, 1<<16), userDefined: userDefined}
}

// Write writes the entities, one line each.
func (w *Writer) Write(es []tracecast.Entity) error {
	for i := range es {
		w.buf = AppendLine(w.buf[:0], &es[i], w.userDefined)
		w.buf = append(w.buf, '\n')
		if _, err := w.w.Write(w.buf); err != nil {
			return err
		}
	}
	return nil
}

// Flush flushes buffered output.
func (w *Writer) Flush() error { return w.w.Flush() }
