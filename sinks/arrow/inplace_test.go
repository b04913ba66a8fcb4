//go:build unix

package arrow

import (
	"bytes"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/ipc"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/internal/fifotest"
)

// TestPipeIsWrittenInPlace: a named pipe (or a device: -o /dev/null) is
// written through, not replaced by a renamed PATH.tmp — which would leave
// the reader at the other end with nothing and, for root, turn /dev/null
// into a regular file — and closing it is no error (fsync refuses pipes
// and devices). An aborted file-format output gets no footer: the reader
// cannot take a cut-short run for a whole one.
func TestPipeIsWrittenInPlace(t *testing.T) {
	for _, tc := range []struct {
		format Format
		abort  bool
	}{{FormatFile, false}, {FormatStream, false}, {FormatFile, true}} {
		t.Run(string(tc.format)+map[bool]string{true: "-aborted"}[tc.abort], func(t *testing.T) {
			got := fifotest.WriteSink(t, func(path string) (tracecast.Sink, error) {
				return New(Options{Path: path, Format: tc.format})
			}, sampleEntities(9), tc.abort)
			rows := 0
			if tc.format == FormatStream {
				sr, err := ipc.NewReader(bytes.NewReader(got))
				if err != nil {
					t.Fatalf("read %d bytes: %v", len(got), err)
				}
				for sr.Next() {
					rows += int(sr.Record().NumRows())
				}
				sr.Release()
			} else {
				fr, err := ipc.NewFileReader(bytes.NewReader(got))
				if tc.abort {
					if err == nil {
						t.Errorf("the aborted output reads as a whole Arrow file (%d records)", fr.NumRecords())
					}
					return
				}
				if err != nil {
					t.Fatalf("read %d bytes: %v", len(got), err)
				}
				for i := range fr.NumRecords() {
					rec, err := fr.Record(i)
					if err != nil {
						t.Fatal(err)
					}
					rows += int(rec.NumRows())
				}
				fr.Close()
			}
			if rows != 9 {
				t.Errorf("%d rows through the pipe, want 9", rows)
			}
		})
	}
}
