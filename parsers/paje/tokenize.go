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

// tokenize splits line into dst, the way pajeng's reader (since 2022) does:
// runs of whitespace separate fields; a field that starts with a double quote
// runs to the next double quote (so "" is an empty field — pajeng 1.3.6
// mis-reads that one); '#' outside quotes ends the line. It reports a reason
// when the line holds binary data or an unterminated string.
func tokenize(line []byte, dst []token) ([]token, string) {
	dst = dst[:0]
	i, n := 0, len(line)
	for i < n {
		c := line[i]
		if isSpace(c) {
			i++
			continue
		}
		if c == '#' {
			break
		}
		if c == '"' {
			j := i + 1
			for j < n && line[j] != '"' {
				j++
			}
			if j == n {
				return dst, "unterminated quoted string"
			}
			dst = append(dst, token{b: line[i+1 : j], quoted: true})
			i = j + 1
			continue
		}
		j := i
		for j < n && !isSpace(line[j]) && line[j] != '#' {
			j++
		}
		dst = append(dst, token{b: line[i:j]})
		i = j
	}
	return dst, ""
}

// checkBinary returns a reason when line holds control characters other than
// whitespace, or is not valid UTF-8: what a binary file or a corrupted
// stream looks like.
func checkBinary(line []byte) string {
	ascii := true
	for i, c := range line {
		if c < 0x20 && !isSpace(c) || c == 0x7f {
			return "binary data (byte 0x" + strconv.FormatUint(uint64(c), 16) + " at column " + strconv.Itoa(i+1) + ")"
		}
		if c >= 0x80 {
			ascii = false
		}
	}
	if !ascii && !utf8.Valid(line) {
		return "binary data (invalid UTF-8)"
	}
	return ""
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
