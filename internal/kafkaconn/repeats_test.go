package kafkaconn

import (
	"testing"
	"testing/synctest"
	"time"
)

// TestRepeats: a cause repeated every 500 ms for 70 s is warned about 3
// times (at once, after 30 s, after 60 s) with the counts in between, and
// Over reports the whole run once.
func TestRepeats(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var r Repeats
		var warned []int
		for range 140 {
			if warn, n := r.Note(); warn {
				warned = append(warned, n)
			}
			time.Sleep(500 * time.Millisecond)
		}
		if len(warned) != 3 || warned[0] != 1 || warned[1] != 60 || warned[2] != 60 {
			t.Errorf("warned %v, want [1 60 60]", warned)
		}
		if n, d := r.Over(); n != 140 || d != 70*time.Second {
			t.Errorf("Over: %d over %v, want 140 over 70s", n, d)
		}
		if n, _ := r.Over(); n != 0 {
			t.Errorf("Over twice: %d", n)
		}
		// A new run warns at once again.
		if warn, n := r.Note(); !warn || n != 1 {
			t.Errorf("a new run: warn %v ×%d", warn, n)
		}
	})
}
