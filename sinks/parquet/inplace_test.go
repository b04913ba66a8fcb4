//go:build unix

package parquet

import (
	"bytes"
	"testing"

	"github.com/apache/arrow/go/v15/parquet/file"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/internal/fifotest"
	"github.com/tracecast/tracecast/sinks/arrow"
)

// TestPipeIsWrittenInPlace: a named pipe (or a device: -o /dev/null) is
// written through, not replaced by a renamed PATH.tmp — which would leave
// the reader at the other end with nothing and, for root, turn /dev/null
// into a regular file — and closing it is no error (fsync refuses pipes
// and devices). An aborted output gets no footer.
func TestPipeIsWrittenInPlace(t *testing.T) {
	for _, abort := range []bool{false, true} {
		t.Run(map[bool]string{false: "closed", true: "aborted"}[abort], func(t *testing.T) {
			got := fifotest.WriteSink(t, func(path string) (tracecast.Sink, error) {
				return New(Options{Path: path, Tables: arrow.RecordTables("ms")})
			}, entities(9), abort)
			pr, err := file.NewParquetReader(bytes.NewReader(got))
			if abort {
				if err == nil {
					t.Errorf("the aborted output reads as a whole Parquet file (%d rows)", pr.NumRows())
				}
				return
			}
			if err != nil {
				t.Fatalf("read %d bytes: %v", len(got), err)
			}
			if n := pr.NumRows(); n != 9 {
				t.Errorf("%d rows through the pipe, want 9", n)
			}
		})
	}
}
