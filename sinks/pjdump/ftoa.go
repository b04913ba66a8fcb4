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
	// Round to the nearest integer by truncation (ties, where the
	// direction would matter, take strconv below).
	var n int64
	if x >= 0 {
		n = int64(x + 0.5)
	} else {
		n = int64(x - 0.5)
	}
	d := x - float64(n)
	if d < 0 {
		d = -d
	}
	if d > 0.4999 || (f > 1e5 || f < -1e5) && d > 0.49 {
		return strconv.AppendFloat(b, f, 'f', 6, 64)
	}
	if n < 0 {
		b = append(b, '-')
		n = -n
	} else if f < 0 {
		b = append(b, '-') // rounds to zero from below: printf says -0.000000
	}
	return appendUnits6(b, uint64(n))
}

// appendUnits6 appends u millionths as "I.FFFFFF", in place.
func appendUnits6(b []byte, u uint64) []byte {
	ip, fp := u/1e6, u%1e6
	nd := decimalDigits(ip)
	off := len(b)
	b = append(b, make([]byte, nd+7)...)
	d := b[off : off+nd+7]
	f0, f1, f2 := fp/10000, fp/100%100, fp%100
	d[nd] = '.'
	d[nd+1], d[nd+2] = digits2[2*f0], digits2[2*f0+1]
	d[nd+3], d[nd+4] = digits2[2*f1], digits2[2*f1+1]
	d[nd+5], d[nd+6] = digits2[2*f2], digits2[2*f2+1]
	putUint(d[:nd], ip)
	return b
}

// appendUint appends u in decimal.
func appendUint(b []byte, u uint64) []byte {
	nd := decimalDigits(u)
	off := len(b)
	b = append(b, make([]byte, nd)...)
	putUint(b[off:off+nd], u)
	return b
}

// putUint writes u in decimal into d, which has exactly its number of
// digits, two digits at a time from the end.
func putUint(d []byte, u uint64) {
	i := len(d)
	for u >= 100 {
		q := u / 100
		r := u - q*100
		i -= 2
		d[i], d[i+1] = digits2[2*r], digits2[2*r+1]
		u = q
	}
	if u >= 10 {
		d[i-2], d[i-1] = digits2[2*u], digits2[2*u+1]
	} else {
		d[i-1] = byte('0' + u)
	}
}

// decimalDigits is the number of decimal digits of u (1 for 0).
func decimalDigits(u uint64) int {
	n := 1
	for u >= 10000 {
		u /= 10000
		n += 4
	}
	for u >= 10 {
		u /= 10
		n++
	}
	return n
}

const digits2 = "00010203040506070809101112131415161718192021222324252627282930313233343536373839" +
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879" +
	"8081828384858687888990919293949596979899"
