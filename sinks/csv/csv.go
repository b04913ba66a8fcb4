// Package csv writes records as RFC 4180 CSV with a header row: the "csv"
// sink. Resolved Paje entities are one table for all natures, the columns
// that do not apply left empty; unlike pj_dump's comma-separated lines,
// values holding commas, quotes or newlines are quoted, so any CSV reader
// (R, pandas, DuckDB) loads it. Signal samples are k,t,x rows.
package csv

import (
	"encoding/csv"
	"encoding/json"
	"io"
	"strconv"

	"github.com/tracecast/tracecast"
)

// Header is the header row.
var Header = []string{"nature", "container", "type", "start", "end", "duration", "imbrication",
	"value", "number", "start_container", "end_container", "key", "extra"}

// Writer writes entities as CSV.
type Writer struct {
	w      *csv.Writer
	row    []string
	header bool
}

// NewWriter returns a CSV writer on w; the header is written before the
// first row.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: csv.NewWriter(w), row: make([]string, len(Header))}
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// Write writes one row per entity. Times are in the trace's unit, with the
// shortest decimal that reads back exactly; extra is a JSON object of the
// user-defined fields, empty when there are none.
func (w *Writer) Write(es []tracecast.Entity) error {
	if !w.header {
		w.header = true
		if err := w.w.Write(Header); err != nil {
			return err
		}
	}
	for i := range es {
		e := &es[i]
		r := w.row
		clear(r)
		r[0], r[1], r[2] = e.Nature.String(), e.Container, e.Type
		r[3], r[4], r[5] = num(e.Start), num(e.End), num(e.End-e.Start)
		r[7] = e.Value
		switch e.Nature {
		case tracecast.NatureState:
			r[6] = strconv.Itoa(e.Imbrication)
		case tracecast.NatureVariable:
			r[7], r[8] = "", num(e.Number)
		case tracecast.NatureLink:
			r[9], r[10], r[11] = e.StartContainer, e.EndContainer, e.Key
		}
		if len(e.Extra) > 0 {
			m := make(map[string]string, len(e.Extra))
			for _, f := range e.Extra {
				m[f.Name] = f.Value
			}
			b, _ := json.Marshal(m)
			r[12] = string(b)
		}
		if err := w.w.Write(r); err != nil {
			return err
		}
	}
	return nil
}

// Flush writes buffered rows and reports any write error.
func (w *Writer) Flush() error {
	if !w.header {
		w.header = true
		if err := w.w.Write(Header); err != nil {
			return err
		}
	}
	w.w.Flush()
	return w.w.Error()
}
