package paje

import (
	"bytes"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/tracecast/tracecast"
)

// allocated returns the bytes fn allocates (on the heap, over the whole
// run, not its peak).
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestBlankLinesCostNothing: blank (and blank-looking) lines are not kept
// anywhere. Before, the splitting goroutine kept a record per line in a
// chunk sent only when 256 KiB of line data had accumulated, which blank
// lines never make: 3 MB of newlines grew the process to 496 MB.
func TestBlankLinesCostNothing(t *testing.T) {
	const n = 4 << 20 // lines
	cases := []struct {
		name string
		line string
	}{
		{"newlines", "\n"},
		{"crlf", "\r\n"},
		{"spaces", "  \n"},
		{"tabs", "\t\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data := []byte(hdr + strings.Repeat(c.line, n) + "4 1 w1 S Idle\n")
			var st Stats
			var err error
			got := allocated(func() {
				_, st, err = dump(t, bytes.NewReader(data), pjOpts("blank"))
			})
			if err != nil {
				t.Fatal(err)
			}
			if want := int64(hdrLines + n + 1); st.Lines != want {
				t.Errorf("%d lines counted, want %d", st.Lines, want)
			}
			// The reader's own buffers (4 chunks of 256 KiB, the line
			// buffer) are a few MiB; a record per line would be 64 bytes
			// × 4 Mi = 256 MiB.
			if got > 16<<20 {
				t.Errorf("%d MiB allocated for %d blank lines", got>>20, n)
			}
		})
	}
	t.Run("gzip", func(t *testing.T) {
		data := gzipped([]byte(hdr + strings.Repeat("\n", n)))
		var err error
		got := allocated(func() { _, _, err = dump(t, data, pjOpts("blank")) })
		if err != nil {
			t.Fatal(err)
		}
		if got > 16<<20 {
			t.Errorf("%d MiB allocated for a gzip of %d newlines", got>>20, n)
		}
	})
}

// TestBlankLinesKeepNumbers: skipping blank lines does not change the line
// numbers of the errors after them, in Read and in readSerial.
func TestBlankLinesKeepNumbers(t *testing.T) {
	body := "\n\n  \n\r\n4 1 w9 S Idle\n"
	want := "x:" + itoa(hdrLines+5) + ": unknown container 'w9'"
	for name, read := range map[string]func(io.Reader, Options) error{
		"Read": func(r io.Reader, o Options) error {
			_, _, err := dump(t, r, o)
			return err
		},
		"readSerial": func(r io.Reader, o Options) error {
			_, err := readSerial(r, o, func([]tracecast.Entity) error { return nil })
			return err
		},
	} {
		if err := read(strings.NewReader(hdr+body), pjOpts("x")); err == nil || err.Error() != want {
			t.Errorf("%s: got %v, want %s", name, err, want)
		}
	}
}
