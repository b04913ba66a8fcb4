package lineerr

import (
	"strings"
	"testing"
)

func TestQuote(t *testing.T) {
	tests := []struct{ in, want string }{
		{"abc", `"abc"`},
		{"", `""`},
		{strings.Repeat("a", 100), `"` + strings.Repeat("a", 100) + `"`},
		{strings.Repeat("a", 101), `"` + strings.Repeat("a", 100) + `…"`},
		{strings.Repeat("é", 60), `"` + strings.Repeat("é", 50) + `…"`},
		{strings.Repeat("\x8c", 40), `"` + strings.Repeat(`\x8c`, 25) + `…"`},
		{"a\"b", `"a\"b"`},
	}
	for _, tt := range tests {
		if got := Quote(tt.in); got != tt.want {
			t.Errorf("Quote(%.20q…) = %s, want %s", tt.in, got, tt.want)
		}
		if got := QuoteBytes([]byte(tt.in)); got != tt.want {
			t.Errorf("QuoteBytes(%.20q…) = %s, want %s", tt.in, got, tt.want)
		}
	}
	if q := QuoteBytes([]byte(strings.Repeat("x", 1<<20))); len(q) > MaxQuote+8 {
		t.Errorf("%d bytes quoted", len(q))
	}
}
