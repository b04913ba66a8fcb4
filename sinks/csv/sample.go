package csv

import (
	"bufio"
	"io"
	"strconv"

	"github.com/tracecast/tracecast"
)

// SampleHeader is the header row of signal samples.
const SampleHeader = "k,t,x"

// SampleWriter writes signal samples as k,t,x rows: k and x integers, t in
// the trace's unit with the shortest decimal that reads back exactly.
type SampleWriter struct {
	w      *bufio.Writer
	b      []byte
	header bool
}

// NewSampleWriter returns a sample writer on w; the header is written
// before the first row, or by Flush when there was none.
func NewSampleWriter(w io.Writer) *SampleWriter {
	return &SampleWriter{w: bufio.NewWriterSize(w, 1<<16)}
}

func (w *SampleWriter) writeHeader() {
	if !w.header {
		w.header = true
		w.w.WriteString(SampleHeader + "\n")
	}
}

// Write writes one row per sample.
func (w *SampleWriter) Write(ss []tracecast.Sample) error {
	w.writeHeader()
	for _, s := range ss {
		w.b = strconv.AppendInt(w.b[:0], s.K, 10)
		w.b = append(w.b, ',')
		w.b = strconv.AppendFloat(w.b, s.T, 'f', -1, 64)
		w.b = append(w.b, ',')
		w.b = strconv.AppendInt(w.b, int64(s.X), 10)
		w.b = append(w.b, '\n')
		if _, err := w.w.Write(w.b); err != nil {
			return err
		}
	}
	return nil
}

// Flush writes buffered rows (the header, if nothing was written) and
// reports any write error.
func (w *SampleWriter) Flush() error {
	w.writeHeader()
	return w.w.Flush()
}
