// Package pjdump writes resolved Paje entities in the line format of
// pajeng's pj_dump, so that existing scripts keep working: the "pjdump"
// sink, and the Writer and AppendLine it is made of. (CSV with a header row
// is package sinks/csv.)
package pjdump

import (
	"encoding/binary"
	"io"
	"math"
	"strconv"
	"unsafe"

	"github.com/tracecast/tracecast"
)

// AppendLine appends e in pj_dump's format, without the newline. Times use
// six decimals, except on Container lines where pj_dump prints C++'s default
// six significant digits. With userDefined, extra fields follow, as pj_dump -u
// prints them.
func AppendLine(b []byte, e *tracecast.Entity, userDefined bool) []byte {
	return appendTail(appendHead(b, e), e, userDefined, nil)
}

// appendHead appends a line's nature, container and type.
func appendHead(b []byte, e *tracecast.Entity) []byte {
	b = append(b, e.Nature.String()...)
	b = appendS(b, e.Container)
	return appendS(b, e.Type)
}

// appendTail appends the fields after the type. With h, the text of the
// (container, type)'s last end time is reused when the entity starts
// there, as most states and variable pieces do (74% and 100% on the 41
// MB StarPU trace): a copy instead of a third of the formatting.
func appendTail(b []byte, e *tracecast.Entity, userDefined bool, h *head) []byte {
	if e.Nature == tracecast.NatureContainer {
		b = appendG(b, e.Start)
		b = appendG(b, e.End)
		b = appendG(b, e.End-e.Start)
		b = appendS(b, e.Value)
	} else {
		if n := len(b); h != nil && h.endN > 0 && math.Float64bits(e.Start) == h.endBits && cap(b)-n >= 26 {
			d := (*[26]byte)(b[n : n+26 : n+26])
			d[0], d[1] = ',', ' '
			binary.LittleEndian.PutUint64(d[2:], h.end[0])
			binary.LittleEndian.PutUint64(d[10:], h.end[1])
			binary.LittleEndian.PutUint64(d[18:], h.end[2])
			b = b[:n+2+int(h.endN)]
		} else {
			b = appendF(b, e.Start)
		}
		if e.Nature != tracecast.NatureEvent {
			// pj_dump's entity duration is 0 when either end is negative.
			d := e.End - e.Start
			if e.Start < 0 || e.End < 0 {
				d = 0
			}
			b = append(b, ", "...)
			n := len(b)
			if u, ok := units6(e.End); ok { // appendFixed6, inlined (see appendF)
				b = appendUnits6(b, u)
			} else {
				b = fixed6Signed(b, e.End)
			}
			if h != nil {
				// Kept when it fits the fixed-size copy (all but
				// huge or special values).
				h.endN = 0
				if len(b)-n <= 24 && cap(b)-n >= 24 {
					w := (*[24]byte)(b[n : n+24 : n+24])
					h.end = [3]uint64{binary.LittleEndian.Uint64(w[:]), binary.LittleEndian.Uint64(w[8:]), binary.LittleEndian.Uint64(w[16:])}
					h.endN, h.endBits = uint8(len(b)-n), math.Float64bits(e.End)
				}
			}
			b = append(b, ", "...)
			if u, ok := units6(d); ok { // appendFixed6, inlined (see appendF)
				b = appendUnits6(b, u)
			} else {
				b = fixed6Signed(b, d)
			}
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

// appendF appends ", " and f with six decimals. appendFixed6's fast path is
// written out here, and for the end time and the duration in appendTail,
// rather than called: a call less per number, 0.9% of the instructions of
// a 41 MB run.
func appendF(b []byte, f float64) []byte {
	b = append(b, ", "...)
	if u, ok := units6(f); ok {
		return appendUnits6(b, u)
	}
	return fixed6Signed(b, f)
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
	// take an address while it is cached. 256 entries: with 64, the
	// StarPU trace's pairs collided on about 7% of the lines, which
	// also lost the end time's text (head.end).
	heads [256]head
}

type head struct {
	c, t   *byte
	cn, tn int
	nature tracecast.Nature
	text   []byte
	// end is the text of the last end time written through the entry,
	// endN bytes long (0: none), of the float whose bits are endBits:
	// the next entity of the pair usually starts there. (The text is
	// the float's, whatever pair wrote it.)
	end     [3]uint64
	endN    uint8
	endBits uint64
}

// appendNewHead is AppendLine for a head not in the cache (Write copies
// cached ones): it formats the head and caches it in h.
func (w *Writer) appendNewHead(b []byte, e *tracecast.Entity, h *head) []byte {
	n := len(b)
	b = appendHead(b, e)
	h.c, h.t, h.cn, h.tn, h.nature = unsafe.StringData(e.Container), unsafe.StringData(e.Type), len(e.Container), len(e.Type), e.Nature
	h.text = append(h.text[:0], b[n:]...)
	return appendTail(b, e, w.userDefined, h)
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
	if w.err != nil {
		return w.err
	}
	// The buffer in a local, the heads cache looked up here: w.buf went
	// through memory at every line, around two calls.
	b := w.buf
	for i := range es {
		e := &es[i]
		c, t := unsafe.StringData(e.Container), unsafe.StringData(e.Type)
		h := &w.heads[(uintptr(unsafe.Pointer(c))>>4^uintptr(unsafe.Pointer(t))>>3^uintptr(e.Nature))&255]
		if h.c == c && h.t == t && h.cn == len(e.Container) && h.tn == len(e.Type) && h.nature == e.Nature && h.text != nil {
			b = appendTail(append(b, h.text...), e, w.userDefined, h)
		} else {
			b = w.appendNewHead(b, e, h)
		}
		b = append(b, '\n')
		if len(b) >= bufSize-512 {
			w.buf = b
			if w.flush(); w.err != nil {
				return w.err
			}
			b = w.buf
		}
	}
	w.buf = b
	return nil
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
