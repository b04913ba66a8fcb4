package input

import (
	"slices"
	"strings"
	"testing"
)

// TestSplitter: chunks hold whole lines (each ends with a newline but the
// input's last), grow for a line longer than the chunk, stand for a line
// longer than the maximum whose bytes are dropped, and put back together
// the input without those.
func TestSplitter(t *testing.T) {
	long := strings.Repeat("L", 40)
	cases := []struct {
		name, in  string
		size, max int
		want      []string // chunks' data; "!" stands for a line too long
	}{
		{"short lines", "a\nb\nc\n", 4, 10, []string{"a\nb\n", "c\n"}},
		{"no newline at end", "a\nb\nc", 4, 10, []string{"a\nb\n", "c"}},
		{"line longer than a chunk", "ab\n" + "cdefgh\n" + "i\n", 4, 10, []string{"ab\n", "cdefgh\n", "i\n"}},
		{"line too long", "a\n" + long + "\nb\n", 4, 10, []string{"a\n", "!", "b\n"}},
		{"too long at end", "a\n" + long, 4, 10, []string{"a\n", "!"}},
		{"too long, no newline, small", "a\n" + long, 64, 10, []string{"a\n" + long}},
		{"empty", "", 4, 10, nil},
		{"newlines", "\n\n\n\n\n", 2, 10, []string{"\n\n", "\n\n", "\n"}},
		{"crlf", "a\r\nb\r\n", 3, 10, []string{"a\r\n", "b\r\n"}},
		{"exact", "abc\n", 4, 10, []string{"abc\n"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sp := NewSplitter(strings.NewReader(c.in), c.size, c.max)
			var got []string
			var ch Chunk
			for {
				ok, err := sp.Fill(&ch)
				if err != nil {
					t.Fatal(err)
				}
				if !ok {
					break
				}
				if ch.TooLong {
					got = append(got, "!")
				} else {
					got = append(got, string(ch.Data))
				}
				if len(got) > 100 {
					t.Fatal("no end")
				}
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("chunks %q, want %q", got, c.want)
			}
		})
	}
}
