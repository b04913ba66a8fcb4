package paje

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestParseFloat: the fast paths give strconv.ParseFloat's value, bit for
// bit, on the shapes of trace numbers and on random ones; what strconv
// rejects (and NaN, infinities, overflows) is rejected.
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
	for _, c := range cases {
		want, err := strconv.ParseFloat(c, 64)
		wantOK := err == nil && !math.IsNaN(want) && !math.IsInf(want, 0)
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

func BenchmarkParseFloat(b *testing.B) {
	in := [][]byte{[]byte("4103.658751000"), []byte("1134.890833000"), []byte("4.406922000"), []byte("0.0"), []byte("57600")}
	b.ReportAllocs()
	for b.Loop() {
		for _, x := range in {
			parseFloat(x)
		}
	}
}
