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
