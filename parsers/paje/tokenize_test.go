package paje

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestParseFloat: the fast paths give strconv.ParseFloat's value, bit for
// bit, on the shapes of trace numbers and on random ones; what strconv
// rejects (and NaN, infinities, overflows) is rejected, and so are the Go
// forms that are no C decimal number ("1_000", "0x10").
func TestParseFloat(t *testing.T) {
	cases := []string{"0", "-0", "+0", "0.0", "1", "-1", "4103.658751000", "1134.890833000", "4.406922000",
		"16143.355910000", "0.000000001", "-0.0001", "12345678", "123456789", "1234567890123456789",
		"12345678901234567890", "9007199254740993", "0.1234567890123456789", "00000000001234.5678",
		"1.5e3", "1e-7", "3.4e38", "1e400", "-1e400", "NaN", "inf", "Inf", "", "-", ".", "1.2.3", "1..2",
		".5", "5.", "12a45678", "1234567/", "1234567:", "00000000", "000000001", "99999999.99999999",
		"0x10", "1_000", " 1", "1 ", "４",
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 100000 {
		cases = append(cases,
			strconv.FormatFloat(r.Float64()*float64(r.IntN(1e6)), 'f', r.IntN(12), 64),
			strconv.FormatFloat(-r.Float64()*1e4, 'f', 9, 64),
			strconv.FormatUint(r.Uint64()>>r.IntN(64), 10))
	}
	// Every shape of parseFixed's, and the same with one byte changed.
	for k := range 9 {
		for f := range 17 {
			for range 200 {
				d := make([]byte, k+1+f)
				for i := range d {
					d[i] = byte('0' + r.IntN(10))
				}
				d[k] = '.'
				cases = append(cases, string(d))
				// The fast path takes every such number of 8 to 16
				// bytes with its point in the first eight.
				if n := len(d); k >= 1 && k <= 7 && f >= 1 && n >= 8 && n <= 16 {
					if _, ok := parseFixed(d); !ok {
						t.Fatalf("parseFixed(%q) fails", d)
					}
				}
				d[r.IntN(len(d))] = "0.9e-+ x/:"[r.IntN(10)]
				cases = append(cases, string(d))
			}
		}
	}
	for _, c := range cases {
		want, err := strconv.ParseFloat(c, 64)
		wantOK := err == nil && !math.IsNaN(want) && !math.IsInf(want, 0) && strings.Trim(c, "0123456789.+-eE") == ""
		got, ok := parseFloat([]byte(c))
		if ok != wantOK || ok && math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("parseFloat(%q) = %v, %v; strconv: %v, %v", c, got, ok, want, err)
		}
	}
}

func TestEightDigits(t *testing.T) {
	for _, c := range []struct {
		in   string
		want uint64
		ok   bool
	}{{"00000000", 0, true}, {"12345678", 12345678, true}, {"99999999", 99999999, true}, {"89083300", 89083300, true},
		{"1234567.", 0, false}, {"/2345678", 0, false}, {"1234567:", 0, false}, {"12 45678", 0, false}, {"\xff2345678", 0, false}} {
		got, ok := eightDigits([]byte(c.in))
		if ok != c.ok || ok && got != c.want {
			t.Errorf("%q: %d %v", c.in, got, ok)
		}
	}
}

// tokenizeRef is the byte-at-a-time tokenizer tokenize replaced: the
// reference it is checked against.
func tokenizeRef(line []byte, dst []token) ([]token, string) {
	dst = dst[:0]
	i, n := 0, len(line)
	high := false
	for i < n {
		switch byteClass[line[i]] {
		case cSpace:
			i++
			continue
		case cHash:
			n = i // the rest is a comment (still checked for binary data below)
			continue
		case cQuote:
			j := i + 1
			for j < n && line[j] != '"' {
				switch byteClass[line[j]] {
				case cCtrl:
					return dst, binaryReason(line, j)
				case cHigh:
					high = true
				}
				j++
			}
			if j == n {
				return dst, "unterminated quoted string"
			}
			dst = append(dst, token{b: line[i+1 : j : j+1]})
			i = j + 1
			continue
		case cCtrl:
			return dst, binaryReason(line, i)
		}
		j := i
		for {
			for j < n && byteClass[line[j]] == cWord {
				j++
			}
			if j == n {
				break
			}
			c := byteClass[line[j]]
			if c == cSpace || c == cHash {
				break
			}
			if c == cCtrl {
				return dst, binaryReason(line, j)
			}
			high = high || c == cHigh // a quote inside a word is part of it
			j++
		}
		dst = append(dst, token{b: line[i:j:j]})
		i = j
	}
	// A comment is ignored, but a NUL there still means the input is not a
	// text trace.
	for j := n; j < len(line); j++ {
		switch byteClass[line[j]] {
		case cCtrl:
			return dst, binaryReason(line, j)
		case cHigh:
			high = true
		}
	}
	if high && !utf8.Valid(line) {
		return dst, "binary data (invalid UTF-8)"
	}
	return dst, ""
}

// TestTokenizeMatchesReference: tokenize gives the reference's tokens and
// reasons on lines made of every kind of byte at every offset (words,
// quotes, comments, control and non-ASCII bytes around the eight-byte
// steps), and on every line of the repository's traces.
func TestTokenizeMatchesReference(t *testing.T) {
	alphabet := []string{"a", "bc", "12345678", " ", "\t", "  ", "\"", "#", "!", "\"q q\"", "\x00", "\x01", "\x1f", "\x7f", "\xff", "é", "\xc3", "\r", "\v", "\f", "$", "~", "4146.657716000"}
	r := rand.New(rand.NewPCG(5, 6))
	lines := []string{"", " ", "#", "\"", "a\"b", "\"a\"b", "a#b", "\"\"\"\""}
	for range 200000 {
		var sb strings.Builder
		for range r.IntN(12) {
			sb.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		lines = append(lines, sb.String())
	}
	traces, _ := filepath.Glob("../../testdata/*/*.trace")
	for _, tr := range traces {
		data, err := os.ReadFile(tr)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, strings.Split(string(data), "\n")...)
	}
	for _, l := range lines {
		checkTokenize(t, []byte(l))
	}
}

func checkTokenize(t *testing.T, line []byte) {
	t.Helper()
	want, wantR := tokenizeRef(line, nil)
	got, gotR := tokenize(line, nil)
	if gotR != wantR || len(got) != len(want) {
		t.Fatalf("%q: %d tokens, %q; want %d, %q", line, len(got), gotR, len(want), wantR)
	}
	for i := range got {
		// The same bytes of the line, not only equal ones.
		if !bytes.Equal(got[i].b, want[i].b) || got[i].quoted() != want[i].quoted() ||
			len(want[i].b) > 0 && &got[i].b[0] != &want[i].b[0] {
			t.Fatalf("%q: token %d is %q (quoted %v), want %q (quoted %v)", line, i, got[i].b, got[i].quoted(), want[i].b, want[i].quoted())
		}
	}
}

// FuzzTokenize checks tokenize against the reference on arbitrary lines.
func FuzzTokenize(f *testing.F) {
	f.Add([]byte("10\t4146.657716000\tw1\tWS\t\"P\""))
	f.Add([]byte("a\"b \"c d\" # e\x00"))
	f.Fuzz(func(t *testing.T, line []byte) { checkTokenize(t, line) })
}

func BenchmarkParseFloat(b *testing.B) {
	in := [][]byte{[]byte("4103.658751000"), []byte("1134.890833000"), []byte("4.406922000"), []byte("0.0"), []byte("57600")}
	b.ReportAllocs()
	for b.Loop() {
		for _, x := range in {
			parseFloat(x)
		}
	}
}

// TestParseFixedExact: parseFixed gives strconv's correctly rounded value,
// on random numbers of every shape it takes and on the decimals nearest to
// the midpoints between two doubles, where a quotient off by a little
// rounds the wrong way. (A multiplication by 10^-f as a double-double, with
// an FMA, is exact too and avoids the division, but made the reader 2–4%
// slower: the FMA's fallback call gives parseFixed a stack frame.)
func TestParseFixedExact(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	check := func(d []byte) {
		got, ok := parseFixed(d)
		if !ok {
			return
		}
		want, err := strconv.ParseFloat(string(d), 64)
		if err != nil || math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("parseFixed(%q) = %v (%#x); strconv: %v (%#x), %v", d, got, math.Float64bits(got), want, math.Float64bits(want), err)
		}
	}
	n := 0
	for k := 1; k <= 7; k++ {
		for f := 1; k+1+f <= 16; f++ {
			if k+1+f < 8 {
				continue
			}
			for range 20000 {
				d := make([]byte, k+1+f)
				for i := range d {
					d[i] = byte('0' + r.IntN(10))
				}
				d[k] = '.'
				check(d)
				n++
			}
		}
	}
	// Midpoints: a random double below 10⁷ and the next one up; their
	// midpoint printed with f decimals is the closest such decimal.
	for range 200000 {
		x := r.Float64() * math.Pow(10, float64(r.IntN(7)))
		mid := x + (math.Nextafter(x, math.Inf(1))-x)/2
		for _, f := range []int{6, 8, 9, 12, 14} {
			check(strconv.AppendFloat(nil, mid, 'f', f, 64))
			n++
		}
	}
	t.Logf("%d numbers", n)
}

// TestQuotedPercent: a line whose first field is a quoted "%..." is an
// event line (an unknown event id), not a header line, on both the
// sequential and the chunked tokenizer (a token's quotes are carried by
// its capacity, token.quoted).
func TestQuotedPercent(t *testing.T) {
	for _, threads := range []int{1, 2} {
		o := pjOpts("quoted")
		o.Threads = threads
		_, _, err := dump(t, strings.NewReader(hdr+`"%EndEventDef" 1 w1 S x`+"\n"), o)
		want := itoa(hdrLines+1) + ": unknown event id"
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("threads %d: %v, want an error with %q", threads, err, want)
		}
		// Unquoted, it is a header line out of place.
		_, _, err = dump(t, strings.NewReader(hdr+"%EndEventDef\n"), o)
		if err == nil || strings.Contains(err.Error(), "unknown event id") {
			t.Errorf("threads %d: unquoted %%EndEventDef: %v, want a header error", threads, err)
		}
	}
}
