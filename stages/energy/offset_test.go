package energy

import (
	"strings"
	"testing"

	"github.com/tracecast/tracecast"
)

// TestOffsetRange: a clock offset beyond ±MaxOffset is refused (QA: tasks
// --offset 1e300 printed a 300-digit time in its error).
func TestOffsetRange(t *testing.T) {
	for _, tc := range []struct {
		offset, io tracecast.Seconds
		want       string
	}{
		{1753114530, 22207.12, ""},
		{-MaxOffset, MaxOffset, ""},
		{1e300, 0, "offset: 1e+300 s is beyond"},
		{0, -1e12, "io_offset: -1e+12 s is beyond"},
	} {
		o := DefaultStageConfig()
		o.Offset, o.IOOffset = tc.offset, tc.io
		err := o.Validate()
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("offset %g, io_offset %g: %v, want %q", tc.offset, tc.io, err, tc.want)
		}
	}
}
