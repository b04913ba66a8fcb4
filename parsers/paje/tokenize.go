package paje

import (
	"encoding/binary"
	"math"
	"strconv"
	"unicode/utf8"
)

// token is one field of a line: a slice of the line, without its quotes.
type token struct {
	b      []byte
	quoted bool
}

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
// unterminated string. One pass over the line: this is the hot loop.
func tokenize(line []byte, dst []token) ([]token, string) {
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
			dst = append(dst, token{b: line[i+1 : j], quoted: true})
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
		dst = append(dst, token{b: line[i:j]})
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
	i, n := 0, len(b)
	if n == 0 {
		return 0, false
	}
	neg := false
	if b[0] == '-' || b[0] == '+' {
		neg = b[0] == '-'
		i++
	}
	var mant uint64
	digits, frac, sawDot, sawDigit := 0, 0, false, false
	for ; i < n; i++ {
		if mant != 0 && digits <= 11 && n-i >= 8 {
			// Eight digits at once (past the leading zeros, which
			// the loop below skips).
			if v, ok := eightDigits(b[i:]); ok {
				mant = mant*1e8 + v
				digits += 8
				if sawDot {
					frac += 8
				}
				i += 7
				continue
			}
		}
		c := b[i]
		if c >= '0' && c <= '9' {
			sawDigit = true
			if mant == 0 && c == '0' {
				if sawDot {
					frac++
				}
				continue
			}
			if digits >= 19 {
				return slowFloat(b)
			}
			mant = mant*10 + uint64(c-'0')
			digits++
			if sawDot {
				frac++
			}
			continue
		}
		if c == '.' && !sawDot {
			sawDot = true
			continue
		}
		return slowFloat(b)
	}
	if !sawDigit {
		return 0, false
	}
	if mant>>53 != 0 || frac >= len(pow10) {
		return slowFloat(b)
	}
	f := float64(mant) / pow10[frac]
	if neg {
		f = -f
	}
	return f, true
}

// eightDigits returns the value of b[:8] when it is eight ASCII digits
// (the first digit in the lowest byte of a little-endian load).
func eightDigits(b []byte) (uint64, bool) {
	v := binary.LittleEndian.Uint64(b)
	// Every byte 0x30..0x39: high nibble 3, and adding 6 keeps it 3.
	if v&0xF0F0F0F0F0F0F0F0|(v+0x0606060606060606)&0xF0F0F0F0F0F0F0F0>>4 != 0x3333333333333333 {
		return 0, false
	}
	v = (v & 0x0F0F0F0F0F0F0F0F) * 2561 >> 8
	v = (v & 0x00FF00FF00FF00FF) * 6553601 >> 16
	return (v & 0x0000FFFF0000FFFF) * 42949672960001 >> 32, true
}

func slowFloat(b []byte) (float64, bool) {
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}
