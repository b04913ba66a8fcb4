package pjdump

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

func TestAppendFixed6(t *testing.T) {
	cases := []float64{0, math.Copysign(0, -1), 1, -1, 0.5, 1e-7, -1e-7, 5e-7, -5e-7, 0.0000005, 0.0000015,
		2.5e-6, 4103.658751, 6982.344319, 807245.514423959, 1e5, math.Nextafter(1e5, 0), 1 << 52 / 1e6, math.Nextafter(1<<52/1e6, 0), 4503599627.3704955, 1e9, -1e9, 4503599627.370496, 1e300, math.Inf(1), math.NaN(), 123456.9999995}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		cases = append(cases, r.Float64()*20000, -r.Float64(), float64(r.IntN(1e9))/1e9*1e4, math.Round(r.Float64()*1e9)/1e9*1e3,
			// Long traces' times (a StarPU run of minutes in ms), up
			// to the fast path's limit and past it.
			r.Float64()*1e6, float64(r.IntN(1e15))/1e9, r.Float64()*4.6e9, math.Ldexp(r.Float64(), 30+r.IntN(3)),
			// Ties of the sixth decimal and their neighbours.
			(float64(r.IntN(1e12))+0.5)/1e6, math.Nextafter((float64(r.IntN(1e9))+0.5)/1e6, 0), math.Nextafter((float64(r.IntN(1e11))+0.5)/1e6, 1e10),
			1e5+float64(r.IntN(1e6))/1e6, 1e5-float64(r.IntN(1e6))/1e6)
	}
	for _, f := range cases {
		want := strconv.AppendFloat(nil, f, 'f', 6, 64)
		if got := appendFixed6(nil, f); string(got) != string(want) {
			t.Fatalf("%v: got %s want %s", f, got, want)
		}
	}
}

func BenchmarkAppendFixed6(b *testing.B) {
	var buf []byte
	for b.Loop() {
		buf = appendFixed6(buf[:0], 6982.344319)
	}
}

func TestAppendUint(t *testing.T) {
	for _, u := range []uint64{0, 1, 9, 10, 11, 99, 100, 101, 999, 1000, 12345, 999999, 1000000, 4503599627, 1<<64 - 1} {
		if got, want := string(appendUint(nil, u)), strconv.FormatUint(u, 10); got != want {
			t.Errorf("%d: got %s", u, got)
		}
	}
}

func TestDecimalDigits(t *testing.T) {
	for _, u := range []uint64{0, 9, 10, 99, 100, 9999, 10000, 99999, 100000, 1e9, 1e15 - 1, 1<<64 - 1} {
		if got, want := decimalDigits(u), len(strconv.FormatUint(u, 10)); got != want {
			t.Errorf("%d: %d digits, want %d", u, got, want)
		}
	}
}
