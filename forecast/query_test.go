package forecast

import "testing"

// A count beyond any signal's range used to wrap to a negative threshold
// (int of 1e20), so "idle>=99999999999999999999" forecast p = 1: at least a
// negative number of idle workers, always.
func TestParseQueryHugeCount(t *testing.T) {
	for _, s := range []string{"idle>=99999999999999999999", "idle>=9223372036854775808", "idle>=4294967296"} {
		if q, err := ParseQuery(s); err == nil {
			t.Errorf("%s: accepted with threshold %d, want an error", s, q.Threshold(4))
		}
	}
	if q, err := ParseQuery("idle>=3"); err != nil || q.Threshold(2) != 3 {
		t.Errorf("idle>=3: %+v, %v", q, err)
	}
}
