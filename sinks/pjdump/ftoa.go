package pjdump

import (
	"encoding/binary"
	"math"
	"strconv"
)

// appendFixed6 appends f with six decimals, exactly as strconv.AppendFloat(b,
// f, 'f', 6, 64) and C's printf("%.6f") do (correctly rounded), but several
// times faster for the common case, a trace time: non-negative and below
// 2⁵²/10⁶ (units6). Other values take fixed6Signed.
func appendFixed6(b []byte, f float64) []byte {
	if u, ok := units6(f); ok {
		return appendUnits6(b, u)
	}
	return fixed6Signed(b, f)
}

// Bit patterns of positive floats order like the floats: one unsigned
// comparison tells 0 ≤ f < limit, rejecting −0 (sign bit set), NaN and
// infinities too.
var (
	bitsE5  = math.Float64bits(1e5)
	bitsLim = math.Float64bits(1 << 52 / 1e6)
)

// units6 returns f·10⁶ rounded to the nearest integer, as printf("%.6f")
// rounds f, for 0 ≤ f < 2⁵²/10⁶, when the float product x = f·10⁶ is
// clearly on one side of a rounding tie; ok is false otherwise. x is
// within half an ulp of the exact product, and below 2⁵² an ulp is at most
// 1/2, so a distance d of x from the nearest integer with |d| ≤ 0.49 (on
// x's grid) leaves the exact product on the same side of the tie. Below
// 10⁵ (x < 2³⁷, ulp ≤ 2⁻¹⁵) 0.4999 is safe too and sends fewer values to
// the slow path. Adding and subtracting 2⁵² rounds x to an integer in
// float arithmetic: a shorter dependency chain than converting to an
// integer and back.
func units6(f float64) (uint64, bool) {
	bits := math.Float64bits(f)
	if bits >= bitsLim {
		return 0, false
	}
	x := float64(f * 1e6) // float64(): never fused with the addition
	r := float64(x+0x1p52) - 0x1p52
	d := math.Abs(x - r)
	if d > 0.49 && (bits >= bitsE5 || d > 0.4999) {
		return 0, false
	}
	return uint64(r), true
}

// fixed6Signed is appendFixed6 for any value: f·10⁶ is rounded to an
// integer in float arithmetic, which is exact enough unless the true value
// sits within 10⁻⁴ of a rounding tie; those, and large or special values,
// take strconv.
func fixed6Signed(b []byte, f float64) []byte {
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

// appendUnits6 appends u millionths as "I.FFFFFF".
//
// Digit generation is bound by the number of instructions, divisions by
// constants (multiplications) first, so the common case, an integer part
// of at most eight digits and room for 16 bytes in b, takes the digits
// three at a time from a table (tab3): the decimals are two table
// entries, an integer part below 10⁶ one or two. They are assembled in two
// registers, joined into the text's first and second 8 bytes and stored as
// two words into a 16-byte array view of b's spare room (no bounds
// checks). Two aligned stores, not overlapping ones: the Writer reads an
// end time's text back as words, and a load that spans two stores cannot
// be forwarded from them (it waits for them to reach the cache: 30% of
// appendTail's cycles when the decimals' word overlapped the integer
// part's). An integer
// part of seven or eight digits is cut in digit pairs by a fixed-point
// reciprocal instead (pairs). Exact for every value: TestAppendUnits6
// checks all fractions and integer parts of every length. Other values
// take appendUnitsSlow.
func appendUnits6(b []byte, u uint64) []byte {
	n := len(b)
	if u >= 1e14 || cap(b)-n < 16 {
		return appendUnitsSlow(b, u)
	}
	ip := u / 1e6
	fp := u - ip*1e6
	f0 := fp / 1000
	fw := '.' | uint64(tab3[f0])<<8 | uint64(tab3[fp-f0*1000])<<32
	// The integer part (the comparisons on u, not on ip, do not wait for
	// the division), leading zeros shifted out.
	var iw uint64
	var nd int
	switch {
	case u < 1e9:
		iw, nd = uint64(tab3[ip]), 3
		if u < 1e7 {
			iw, nd = iw>>16, 1
		} else if u < 1e8 {
			iw, nd = iw>>8, 2
		}
	case u < 1e12:
		i0 := ip / 1000
		iw, nd = uint64(tab3[i0])|uint64(tab3[ip-i0*1000])<<24, 6
		if u < 1e10 {
			iw, nd = iw>>16, 4
		} else if u < 1e11 {
			iw, nd = iw>>8, 5
		}
	default:
		// ip times 2⁵⁰/10⁶ holds its first digit pair in the bits
		// above fracBits and the rest as a binary fraction, which
		// times 100 shifts out the next pair.
		z := ip * inv1e6
		iw = uint64(pairs[z>>fracBits])
		z = times100(z & fracMask)
		iw |= uint64(pairs[z>>fracBits]) << 16
		z = times100(z & fracMask)
		iw |= uint64(pairs[z>>fracBits]) << 32
		z = times100(z & fracMask)
		iw |= uint64(pairs[z>>fracBits]) << 48
		nd = 8
		if u < 1e13 {
			iw, nd = iw>>8, 7
		}
	}
	// iw's bytes above nd are zero, fw has 7: lo and hi are the text's
	// bytes 0–7 and 8–15 (hi is 0 for an integer part of one digit). The
	// shift counts are masked to 6 bits, where Go would otherwise test
	// for counts of 64 and more: fw<<sh is taken in two steps (it is 0
	// for sh = 64, eight integer digits).
	sh := uint(nd) * 8
	lo := iw | fw<<((sh-1)&63)<<1
	hi := fw >> ((64 - sh) & 63)
	d := (*[16]byte)(b[n : n+16 : n+16])
	binary.LittleEndian.PutUint64(d[:8], lo)
	binary.LittleEndian.PutUint64(d[8:], hi)
	return b[:n+nd+7]
}

// tab3[x] is x < 1000 in three ASCII digits, the first in the low byte.
var tab3 = func() (t [1000]uint32) {
	for x := range t {
		t[x] = uint32('0'+x/100) | uint32('0'+x/10%10)<<8 | uint32('0'+x%10)<<16
	}
	return
}()

// The fixed-point reciprocal of appendUnits6: ⌈2⁵⁰/10⁶⌉. A part below 10⁸
// times it stays below 2⁶⁴, and the fraction times 100 too.
const (
	fracBits = 50
	fracMask = 1<<fracBits - 1
	inv1e6   = (1<<fracBits + 1000000 - 1) / 1000000
)

// times100 is x·100 in shifts and adds (LEA instructions), which leave the
// multiplier to the divisions.
func times100(x uint64) uint64 {
	x += x << 2 // 5x
	x += x << 2 // 25x
	return x << 2
}

// pairs[x] is x < 100 in two ASCII digits, the first in the low byte.
var pairs = func() (t [100]uint16) {
	for x := range t {
		t[x] = uint16('0'+x/10) | uint16('0'+x%10)<<8
	}
	return
}()

// appendUnitsSlow is appendUnits6 for any u: the digits are written
// backwards, two at a time, into a small array, then copied.
func appendUnitsSlow(b []byte, u uint64) []byte {
	var tmp [27]byte // 20 digits of a uint64, the point, 6 decimals
	ip := u / 1e6
	fp := u - ip*1e6
	f0 := fp / 10000
	r := fp - f0*10000
	f1 := r / 100
	f2 := r - f1*100
	tmp[20] = '.'
	tmp[21], tmp[22] = digits2[2*f0], digits2[2*f0+1]
	tmp[23], tmp[24] = digits2[2*f1], digits2[2*f1+1]
	tmp[25], tmp[26] = digits2[2*f2], digits2[2*f2+1]
	i := 20
	for ip >= 100 {
		q := ip / 100
		r := ip - q*100
		i -= 2
		tmp[i], tmp[i+1] = digits2[2*r], digits2[2*r+1]
		ip = q
	}
	if ip >= 10 {
		i -= 2
		tmp[i], tmp[i+1] = digits2[2*ip], digits2[2*ip+1]
	} else {
		i--
		tmp[i] = byte('0' + ip)
	}
	return append(b, tmp[i:]...)
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
