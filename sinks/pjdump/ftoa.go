package pjdump

import (
	"math"
	"strconv"
)

// appendFixed6 appends f with six decimals, exactly as strconv.AppendFloat(b,
// f, 'f', 6, 64) and C's printf("%.6f") do (correctly rounded), but several
// times faster for the common case: f·10⁶ is rounded to an integer in float
// arithmetic, which is exact enough unless the true value sits within 10⁻⁴
// of a rounding tie; those, and large or special values, take strconv.
func appendFixed6(b []byte, f float64) []byte {
	const lim = 1 << 52 / 1e6 // f·10⁶ stays an exact integer range
	if !(f > -lim && f < lim) || f == 0 && math.Signbit(f) {
		return strconv.AppendFloat(b, f, 'f', 6, 64)
	}
	x := f * 1e6
	r := math.Round(x)
	if d := math.Abs(x - r); d > 0.4999 || math.Abs(f) > 1e5 && d > 0.49 {
		return strconv.AppendFloat(b, f, 'f', 6, 64)
	}
	n := int64(r)
	if n < 0 {
		b = append(b, '-')
		n = -n
	} else if f < 0 {
		b = append(b, '-') // rounds to zero from below: printf says -0.000000
	}
	ip, fp := n/1e6, n%1e6
	if ip < 100 {
		if ip >= 10 {
			b = append(b, digits2[2*ip:2*ip+2]...)
		} else {
			b = append(b, byte('0'+ip))
		}
	} else {
		b = strconv.AppendInt(b, ip, 10)
	}
	f0, f1, f2 := fp/10000, fp/100%100, fp%100
	return append(b, '.', digits2[2*f0], digits2[2*f0+1], digits2[2*f1], digits2[2*f1+1], digits2[2*f2], digits2[2*f2+1])
}

const digits2 = "00010203040506070809101112131415161718192021222324252627282930313233343536373839" +
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879" +
	"8081828384858687888990919293949596979899"
