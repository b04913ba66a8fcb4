// Package pjdump writes resolved Paje entities in the line format of
// pajeng's pj_dump, so that existing scripts keep working: the "pjdump"
// sink, and the Writer and AppendLine it is made of. (CSV with a header row
// is package sinks/csv.)
package pjdump

import (
	"encoding/binary"
	"io"
	"strconv"
	"unsafe"

	"github.com/tracecast/tracecast"
)

// AppendLine appends e in pj_dump's format, without the newline. Times use
// six decimals, except on Container lines where pj_dump prints C++'s default
// six significant digits. With userDefined, extra fields follow, as pj_dump -u
// prints them.
func AppendLine(b []byte, e *tracecast.Entity, userDefined bool) []byte {
	return appendTail(appendHead(b, e), e, userDefined)
}

// appendHead appends a line's nature, container and type.
func appendHead(b []byte, e *tracecast.Entity) []byte {
	b = append(b, e.Nature.String()...)
	b = appendS(b, e.Container)
	return appendS(b, e.Type)
}

// appendTail appends the fields after the type.
func appendTail(b []byte, e *tracecast.Entity, userDefined bool) []byte {
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
			b = append(b, ", "...)
			switch imb := e.Imbrication; {
			case imb >= 0 && imb < 10 && cap(b)-len(b) >= 8:
				// Nearly every state: a digit and ".000000", one
				// 8-byte store.
				n := len(b)
				b = b[:n+8]
				binary.LittleEndian.PutUint64(b[n:], uint64('0'+imb)|zeros6)
			case imb >= 0:
				b = appendUnits6(b, uint64(imb)*1e6)
			default:
				b = appendFixed6(b, float64(imb))
			}
			b = appendS(b, e.Value)
		case tracecast.NatureVariable:
			b = appendF(b, e.Number)
		case tracecast.NatureEvent:
			b = appendS(b, e.Value)
		case tracecast.NatureLink:
			b = appendS(b, e.Value)
			b = appendS(b, e.StartContainer())
			b = appendS(b, e.EndContainer())
			b = appendS(b, e.Key())
		}
	}
	if userDefined {
		for _, f := range e.Extra() {
			b = appendS(b, f.Value)
		}
	}
	return b
}

// zeros6 is ".000000" after a byte, as a little-endian word.
const zeros6 = '.'<<8 | '0'<<16 | '0'<<24 | '0'<<32 | '0'<<40 | '0'<<48 | '0'<<56

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

// Writer writes entities in pj_dump format. Lines are formatted straight
// into its buffer, which goes to the underlying writer when full.
type Writer struct {
	w           io.Writer
	buf         []byte
	userDefined bool
	err         error
	// heads caches lines' first three fields ("State, CPU0, Worker
	// State") by the nature and the addresses of the container's and
	// type's names: a reader hands the same strings for every entity of
	// a (container, type), and one copy of the head costs less than the
	// three appends it replaces. A miss (another pair on the entry, or
	// names copied per entity) only formats the head as before. The
	// entries' pointers keep their names alive, so no other name can
	// take an address while it is cached.
	heads [64]head
}

type head struct {
	c, t   *byte
	cn, tn int
	nature tracecast.Nature
	text   []byte
}

// appendLine is AppendLine with the heads cache.
func (w *Writer) appendLine(b []byte, e *tracecast.Entity) []byte {
	c, t := unsafe.StringData(e.Container), unsafe.StringData(e.Type)
	h := &w.heads[(uintptr(unsafe.Pointer(c))>>4^uintptr(unsafe.Pointer(t))>>3^uintptr(e.Nature))&63]
	if h.c == c && h.t == t && h.cn == len(e.Container) && h.tn == len(e.Type) && h.nature == e.Nature && h.text != nil {
		return appendTail(append(b, h.text...), e, w.userDefined)
	}
	n := len(b)
	b = appendHead(b, e)
	h.c, h.t, h.cn, h.tn, h.nature = c, t, len(e.Container), len(e.Type), e.Nature
	h.text = append(h.text[:0], b[n:]...)
	return appendTail(b, e, w.userDefined)
}

// bufSize is the Writer's buffer; a line longer than the rest of it grows
// the buffer once, to be written at once.
const bufSize = 1 << 16

// NewWriter returns a pj_dump-format writer on w.
func NewWriter(w io.Writer, userDefined bool) *Writer {
	return &Writer{w: w, buf: make([]byte, 0, bufSize), userDefined: userDefined}
}

// Write writes the entities, one line each. After an error from the
// underlying writer, it returns that error and writes nothing more.
func (w *Writer) Write(es []tracecast.Entity) error {
	for i := range es {
		if w.err != nil {
			return w.err
		}
		w.buf = append(w.appendLine(w.buf, &es[i]), '\n')
		if len(w.buf) >= bufSize-512 {
			w.flush()
		}
	}
	return w.err
}

func (w *Writer) flush() {
	if w.err == nil && len(w.buf) > 0 {
		_, w.err = w.w.Write(w.buf)
	}
	w.buf = w.buf[:0]
	if cap(w.buf) > bufSize {
		w.buf = make([]byte, 0, bufSize)
	}
}

// Flush writes what is buffered.
func (w *Writer) Flush() error {
	w.flush()
	return w.err
}
