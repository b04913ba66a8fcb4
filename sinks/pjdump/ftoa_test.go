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

// TestAppendUnits6 checks the fixed-point path against strconv: every
// six-digit fraction with integer parts of every length, random values
// and the limits of each length, with and without room after the end of
// the buffer (the fast path stores 16 bytes), keeping what is before.
func TestAppendUnits6(t *testing.T) {
	var want, got []byte
	check := func(u uint64, rooms ...int) {
		want = strconv.AppendUint(append(want[:0], "ab"...), u/1e6, 10)
		want = append(want, '.')
		frac := strconv.AppendUint(nil, u%1e6+1e6, 10) // a leading 1, then six digits
		want = append(want, frac[1:]...)
		for _, room := range rooms {
			got = append(make([]byte, 0, 2+room), "ab"...)
			if got = appendUnits6(got, u); string(got) != string(want) {
				t.Fatalf("%d (room %d): got %q want %q", u, room, got, want)
			}
		}
	}
	for fp := range uint64(1e6) {
		for _, ip := range []uint64{fp % 100, fp*100 + 99} {
			check(ip*1e6+fp, 16)
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	for p := uint64(1); p <= 1e19; p *= 10 {
		for _, u := range []uint64{p - 1, p, p + 1, 9*p + 999999, r.Uint64N(p)} {
			check(u, 0, 15, 16, 40)
		}
	}
	for range 10000 {
		check(r.Uint64N(1e14), 0, 15, 16, 40)
		check(r.Uint64(), 0, 16)
	}
	if testing.Short() {
		return
	}
	// Every integer part below 10⁸ (the fixed-point products' range).
	for ip := range uint64(1e8) {
		u := ip*1e6 + ip%1e6
		b := appendUnits6(make([]byte, 0, 16), u)
		if want := strconv.FormatUint(ip, 10); string(b[:len(b)-7]) != want {
			t.Fatalf("%d: got %s", u, b)
		}
	}
}

// BenchmarkAppendUnits6 formats millisecond times of four and five
// digits, each after a separator, as the writer does.
func BenchmarkAppendUnits6(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	us := make([]uint64, 4096)
	for i := range us {
		us[i] = 1000e6 + r.Uint64N(15000e6)
	}
	buf := make([]byte, 0, 1<<16)
	for b.Loop() {
		buf = buf[:0]
		for _, u := range us {
			buf = append(buf, ", "...)
			buf = appendUnits6(buf, u)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(us)), "ns/number")
}
