// Package pjdump writes resolved Paje entities in the line format of
// pajeng's pj_dump, so that existing scripts keep working: the "pjdump"
// sink, and the Writer and AppendLine it is made of. (CSV with a header row
// is package sinks/csv.)
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
	b = appendS(b, e.Container)
	b = appendS(b, e.Type)
	if e.Nature == tracecast.NatureContainer {
		b = appendG(b, e.Start)
		b = appendG(b, e.End)
		b = appendG(b, e.End-e.Start)
		b = appendS(b, e.Value)
	} else {
		b = appendF(b, e.Start)
		if e.Nature != tracecast.NatureEvent {
			// pj_dump's entity duration is 0 when either end is negative.
			d := e.End - e.Start
			if e.Start < 0 || e.End < 0 {
				d = 0
			}
			b = appendF(b, e.End)
			b = appendF(b, d)
		}
		switch e.Nature {
		case tracecast.NatureState:
			b = appendF(b, float64(e.Imbrication))
			b = appendS(b, e.Value)
		case tracecast.NatureVariable:
			b = appendF(b, e.Number)
		case tracecast.NatureEvent:
			b = appendS(b, e.Value)
		case tracecast.NatureLink:
			b = appendS(b, e.Value)
			b = appendS(b, e.StartContainer)
			b = appendS(b, e.EndContainer)
			b = appendS(b, e.Key)
		}
	}
	if userDefined {
		for _, f := range e.Extra {
			b = appendS(b, f.Value)
		}
	}
	return b
}

func appendS(b []byte, s string) []byte {
	b = append(b, ", "...)
	return append(b, s...)
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
