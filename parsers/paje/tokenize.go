package paje

import (
	"encoding/binary"
	"math"
	"math/bits"
	"strconv"
	"unicode/utf8"
)

// token is one field of a line: a slice of the line, without its quotes.
// A quoted field's slice has room for one byte more, its closing quote; any
// other's capacity is its length. (24 bytes a token instead of 32 with a
// flag: the chunk tokenizers write six million of them on the 41 MB
// trace, which the resolver, on the other core, reads.)
type token struct {
	b []byte
}

// quoted reports whether the field was quoted.
func (t token) quoted() bool { return cap(t.b) > len(t.b) }

// isSpace is the whitespace set of pajeng's reader (isspace in the C locale).
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'
}

// Byte classes for the tokenizer.
const (
	cWord  = iota // part of a bare word
	cSpace        // separator
	cHash         // starts a comment
	cQuote        // starts a quoted string
	cCtrl         // a control character: binary data
	cHigh         // non-ASCII: check UTF-8
)

var byteClass = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		switch {
		case isSpace(byte(c)):
			t[c] = cSpace
		case c == '#':
			t[c] = cHash
		case c == '"':
			t[c] = cQuote
		case c < 0x20 || c == 0x7f:
			t[c] = cCtrl
		case c >= 0x80:
			t[c] = cHigh
		}
	}
	return
}()

// tokenize splits line into dst, the way pajeng's reader (since 2022) does:
// runs of whitespace separate fields; a field that starts with a double quote
// runs to the next double quote (so "" is an empty field — pajeng 1.3.6
// mis-reads that one); '#' outside quotes ends the line. It reports a reason
// when the line holds binary data (control characters, invalid UTF-8) or an
// unterminated string.
//
// This is the hot loop. It looks at the line eight bytes at a time and
// visits only the bytes that may matter (specials): separators, quotes,
// '#', control and non-ASCII bytes; the bytes of a word in between cost
// nothing each.
func tokenize(line []byte, dst []token) ([]token, string) {
	dst = dst[:0]
	n := len(line)
	high := false
	field := 0 // where the next field may start: after a separator or a quoted field
	// The loop keeps little state (what the processor holds in
	// registers): a quoted field and a comment are read to their end by
	// loops of their own.
	for blk := 0; blk < n; blk += 8 {
		for m := specials(line, blk); m != 0; m &= m - 1 {
			j := blk + bits.TrailingZeros64(m)>>3
			c := line[j]
			switch byteClass[c] {
			case cWord:
				continue // '!', or a byte flagged only because one below is
			case cSpace:
				if j > field {
					dst = append(dst, token{b: line[field:j:j]})
				}
				field = j + 1
				continue
			case cQuote:
				if j != field {
					continue // inside a word: part of it
				}
				end, hi, r := quoted(line, j+1)
				if r != "" {
					return dst, r
				}
				high = high || hi
				dst = append(dst, token{b: line[j+1 : end : end+1]})
				field = end + 1
				// Read on after the closing quote.
				blk = end + 1 - 8 // the loop adds 8
				m = 0
				continue
			case cHash:
				if j > field {
					dst = append(dst, token{b: line[field:j:j]})
				}
				// The rest is a comment, still checked for binary data.
				if r := commentCheck(line, j+1, high); r != "" {
					return dst, r
				}
				return dst, ""
			case cCtrl:
				return dst, binaryReason(line, j)
			case cHigh:
				high = true
				continue
			}
		}
	}
	if n > field {
		dst = append(dst, token{b: line[field:n:n]})
	}
	if high && !utf8.Valid(line) {
		return dst, "binary data (invalid UTF-8)"
	}
	return dst, ""
}

// quoted reads a quoted field from its first byte at i to its closing
// quote, at end. hi reports non-ASCII bytes; r is set for binary data or
// a missing closing quote.
func quoted(line []byte, i int) (end int, hi bool, r string) {
	for j := i; j < len(line); j++ {
		switch c := line[j]; {
		case c == '"':
			return j, hi, ""
		case c >= 0x80:
			hi = true
		case byteClass[c] == cCtrl:
			return 0, false, binaryReason(line, j)
		}
	}
	return 0, false, "unterminated quoted string"
}

// commentCheck checks the comment from i to the end of line for binary
// data; high says whether the line had non-ASCII bytes before it.
func commentCheck(line []byte, i int, high bool) string {
	for j := i; j < len(line); j++ {
		switch c := line[j]; {
		case c >= 0x80:
			high = true
		case byteClass[c] == cCtrl:
			return binaryReason(line, j)
		}
	}
	if high && !utf8.Valid(line) {
		return "binary data (invalid UTF-8)"
	}
	return ""
}

// specials flags the bytes of line[blk:blk+8] that may matter to tokenize,
// one bit (0x80) per byte: every byte below 0x24 (whitespace, control
// characters, '!', '"', '#'), DEL and every non-ASCII byte — and possibly
// other bytes above a flagged one (borrows), which tokenize classifies as
// word bytes. b < 0x24 sets the high bit of b − 0x24, b ≥ 0x80 has it,
// DEL is a zero byte of b ^ 0x7f. Past the end of line nothing is flagged.
func specials(line []byte, blk int) uint64 {
	var v uint64
	if rest := len(line) - blk; rest >= 8 {
		v = binary.LittleEndian.Uint64(line[blk:])
	} else {
		// The last bytes, with 0x30 ('0', an ordinary byte) after them.
		v = 0x3030303030303030
		for k := rest - 1; k >= 0; k-- {
			v = v<<8 | uint64(line[blk+k])
		}
	}
	x := v ^ (0x7f * ones)
	return ((v-0x24*ones)&^v | v | (x-ones)&^x) & highs
}

// SWAR constants: a byte repeated eight times.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

func binaryReason(line []byte, i int) string {
	return "binary data (byte 0x" + strconv.FormatUint(uint64(line[i]), 16) + " at column " + strconv.Itoa(i+1) + ")"
}

var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// parseFloat parses a decimal number. The common shapes of trace timestamps
// ("4103.658751000", "0", "-0.0001") take an exact fast path (Clinger's: an
// integer mantissa below 2^53 scaled by an exact power of ten) that neither
// allocates nor rounds differently from strconv; everything else falls back
// to strconv.ParseFloat.
func parseFloat(b []byte) (float64, bool) {
	if f, ok := parseFixed(b); ok {
		return f, true
	}
	n := len(b)
	i := 0
	neg := false
	if n > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		i++
	}
	start := i
	var mant uint64
	// The integer part, digit by digit: times have a few.
	for i < n && b[i]-'0' < 10 {
		mant = mant*10 + uint64(b[i]-'0')
		i++
	}
	nd, frac := i-start, 0
	if i < n && b[i] == '.' {
		i++
		fs := i
		// The decimals, eight at a time while they last.
		for n-i >= 8 {
			v, ok := eightDigits(b[i:])
			if !ok {
				break
			}
			mant = mant*1e8 + v
			i += 8
		}
		for i < n && b[i]-'0' < 10 {
			mant = mant*10 + uint64(b[i]-'0')
			i++
		}
		frac = i - fs
		nd += frac
	}
	// Past 19 digits mant may have wrapped: strconv decides, as it does
	// for exponents, anything else after the digits, and mantissas or
	// scales a float64 does not hold exactly.
	if i != n || nd > 19 || mant>>53 != 0 || frac >= len(pow10) {
		if nd == 0 && i == n {
			return 0, false // no digit: "", "-", "."
		}
		return slowFloat(b)
	}
	if nd == 0 {
		return 0, false
	}
	f := float64(mant) / pow10[frac]
	if neg {
		f = -f
	}
	return f, true
}

// parseFixed parses the shape of trace timestamps, 8 to 16 bytes: one to
// seven digits, a point, one or more digits ("4103.658751000"), without a
// loop. The integer part is found with the point in the first eight
// bytes; it and the decimals are converted eight digits at a time
// (eightDigits, which checks they are digits), padded with leading zeros,
// independently of one another, which leaves the processor a short chain
// of dependent operations rather than one multiplication per digit. At
// most 15 digits: the mantissa is exact, and so is the quotient (Clinger's
// fast path, as in parseFloat). ok is false for any other shape.
func parseFixed(b []byte) (float64, bool) {
	n := len(b)
	if n < 8 || n > 16 {
		return 0, false
	}
	w := binary.LittleEndian.Uint64(b)
	// The point: the lowest zero byte of w ^ '.'s (a borrow only ever
	// flags bytes above a zero one).
	x := w ^ ('.' * ones)
	z := (x - ones) &^ x & highs
	if z == 0 {
		return 0, false
	}
	k := bits.TrailingZeros64(z) >> 3 // integer digits
	f := n - k - 1                    // decimals
	if k == 0 || f == 0 {
		return 0, false
	}
	last := binary.LittleEndian.Uint64(b[n-8:])
	var m uint64 // the digits without the point
	if f <= 8 {
		// The integer part, moved to the top bytes, zeros below, and
		// the decimals, the top f bytes of the last eight.
		ip, ok1 := eightDigits8(w<<(64-8*k) | ascii0>>(8*k))
		low := uint64(1)<<(8*(8-f)) - 1 // the other bytes (none when f = 8)
		frac, ok2 := eightDigits8(last&^low | ascii0&low)
		if !ok1 || !ok2 {
			return 0, false
		}
		m = ip*pow10u[f] + frac
	} else {
		// The last eight decimals, and before them the integer part
		// and the f−8 decimals after the point, all in the first eight
		// bytes (n ≤ 16): one word once the point is taken out (the
		// bytes above it moved down one), as StarPU's times are.
		lowK := uint64(1)<<(8*k) - 1
		d := k + f - 8 // digits in the first word
		hi, ok1 := eightDigits8((w&lowK|w>>8&^lowK)<<(64-8*d) | ascii0>>(8*d))
		lo, ok2 := eightDigits8(last)
		if !ok1 || !ok2 {
			return 0, false
		}
		m = hi*1e8 + lo
	}
	// m < 10¹⁵ < 2⁶³: a signed conversion, without the unsigned one's
	// branch.
	return float64(int64(m)) / pow10[f], true
}

// ascii0 is eight '0' bytes.
const ascii0 = '0' * ones

// pow10u are the powers of ten a fixed-point number's integer part is
// scaled by.
var pow10u = [...]uint64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

// eightDigits8 is eightDigits of a loaded word.
func eightDigits8(v uint64) (uint64, bool) {
	// Every byte 0x30..0x39: high nibble 3, and adding 6 keeps it 3.
	if v&0xF0F0F0F0F0F0F0F0|(v+0x0606060606060606)&0xF0F0F0F0F0F0F0F0>>4 != 0x3333333333333333 {
		return 0, false
	}
	v = (v & 0x0F0F0F0F0F0F0F0F) * 2561 >> 8
	v = (v & 0x00FF00FF00FF00FF) * 6553601 >> 16
	return (v & 0x0000FFFF0000FFFF) * 42949672960001 >> 32, true
}

// eightDigits returns the value of b[:8] when it is eight ASCII digits
// (the first digit in the lowest byte of a little-endian load).
func eightDigits(b []byte) (uint64, bool) {
	return eightDigits8(binary.LittleEndian.Uint64(b))
}

func slowFloat(b []byte) (float64, bool) {
	// Decimal numbers only, as C's strtod reads them in a trace: Go's
	// syntax would also take "1_0" (10) and hexadecimal floats.
	for _, c := range b {
		if c-'0' >= 10 && c != '.' && c != '-' && c != '+' && c|0x20 != 'e' {
			return 0, false
		}
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}
