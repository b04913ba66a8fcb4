package kafkaname

import (
	"strings"
	"testing"
)

func TestTopic(t *testing.T) {
	for _, c := range []struct {
		name string
		ok   bool
	}{
		{"tracecast.traces", true},
		{"a-b_c.D9", true},
		{strings.Repeat("x", 249), true},
		{strings.Repeat("x", 250), false},
		{strings.Repeat("x", 300), false},
		{"", false},
		{".", false},
		{"..", false},
		{"has space", false},
		{"slash/no", false},
		{"é", false},
	} {
		if err := Topic(c.name); (err == nil) != c.ok {
			t.Errorf("%.20q: %v", c.name, err)
		}
	}
}

// Messages quote at most ~100 bytes of a name, however long.
func TestMessagesStayShort(t *testing.T) {
	for _, name := range []string{strings.Repeat("x", 100000), strings.Repeat("é", 200) + "/", strings.Repeat("a", 200) + " "} {
		err := Topic(name)
		if err == nil || len(err.Error()) > 160 {
			t.Errorf("%d-byte name: %v", len(name), err)
		}
	}
	if q := Quote(strings.Repeat("é", 100)); !strings.HasSuffix(q, "(200 bytes)") || strings.Contains(q, `\x`) {
		t.Errorf("Quote cut a character: %s", q)
	}
}
