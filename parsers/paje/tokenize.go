package paje

import (
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
	word:
		for j < n {
			switch byteClass[line[j]] {
			case cWord:
			case cSpace, cHash:
				break word
			case cCtrl:
				return dst, binaryReason(line, j)
			case cHigh:
				high = true
			}
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

func slowFloat(b []byte) (float64, bool) {
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}
