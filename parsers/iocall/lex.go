package iocall

import (
	"bytes"
	"math"
	"strconv"

	"github.com/tracecast/tracecast/internal/lineerr"
)

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

func itoa(n int) string { return strconv.Itoa(n) }

// quoteShort quotes a token in a message, cut to lineerr.MaxQuote bytes.
func quoteShort(b []byte) string { return lineerr.QuoteBytes(b) }

func atoi(b []byte) (int, bool) {
	v, ok := atoi64(b)
	if !ok || v > 1<<31 || v < -(1<<31) {
		return 0, false
	}
	return int(v), true
}

// atoi64 parses a decimal or 0x-hex integer, optionally negative.
func atoi64(b []byte) (int64, bool) {
	neg := false
	if len(b) > 0 && b[0] == '-' {
		neg, b = true, b[1:]
	}
	if len(b) == 0 || len(b) > 19 {
		return 0, false
	}
	var v int64
	if len(b) > 2 && b[0] == '0' && (b[1] == 'x' || b[1] == 'X') {
		if len(b) > 17 {
			return 0, false
		}
		for _, c := range b[2:] {
			switch {
			case c >= '0' && c <= '9':
				v = v<<4 | int64(c-'0')
			case c >= 'a' && c <= 'f':
				v = v<<4 | int64(c-'a'+10)
			case c >= 'A' && c <= 'F':
				v = v<<4 | int64(c-'A'+10)
			default:
				return 0, false
			}
			if v < 0 {
				return 0, false
			}
		}
	} else {
		for _, c := range b {
			if !isDigit(c) {
				return 0, false
			}
			d := int64(c - '0')
			if v > (math.MaxInt64-d)/10 {
				return 0, false // does not fit: never a wrapped value
			}
			v = v*10 + d
		}
	}
	if neg {
		v = -v
	}
	return v, true
}

// parseDur parses "0.000074" (seconds).
func parseDur(b []byte) (float64, bool) {
	ip, fp, ok := fixed(b)
	if !ok {
		return 0, false
	}
	return ip + fp, true
}

// fixed parses unsigned "123.456" into integer and fractional parts.
func fixed(b []byte) (float64, float64, bool) {
	if len(b) == 0 || len(b) > 32 {
		return 0, 0, false
	}
	var ip int64
	i := 0
	for i < len(b) && isDigit(b[i]) {
		ip = ip*10 + int64(b[i]-'0')
		i++
	}
	if i == 0 || i > 18 {
		return 0, 0, false // no digit, or more than an int64 holds
	}
	if i == len(b) {
		return float64(ip), 0, true
	}
	if b[i] != '.' || i+1 == len(b) {
		return 0, 0, false
	}
	var fp int64
	scale := 1.0
	for _, c := range b[i+1:] {
		if !isDigit(c) {
			return 0, 0, false
		}
		if scale < 1e15 {
			fp = fp*10 + int64(c-'0')
			scale *= 10
		}
	}
	return float64(ip), float64(fp) / scale, true
}

// parseTime parses "HH:MM:SS[.ffffff]" (clock) or "SSSSSSSSSS.ffffff".
func parseTime(b []byte) (float64, bool, bool) {
	if bytes.IndexByte(b, ':') < 0 {
		v, ok := parseDur(b)
		return v, false, ok
	}
	if len(b) < 8 || b[2] != ':' || b[5] != ':' {
		return 0, false, false
	}
	h, ok1 := atoi(b[0:2])
	m, ok2 := atoi(b[3:5])
	s, ok3 := parseDur(b[6:])
	if !ok1 || !ok2 || !ok3 || h > 23 || m > 59 || s >= 61 {
		return 0, false, false
	}
	return float64(h*3600+m*60) + s, true, true
}

// parseRet parses a return value: "832", "-1", "0x7f…", "3</path>".
func parseRet(b []byte) (int64, []byte, bool) {
	if i := bytes.IndexByte(b, '<'); i > 0 && b[len(b)-1] == '>' {
		v, ok := atoi64(b[:i])
		return v, cutAnnot(b[i+1 : len(b)-1]), ok
	}
	v, ok := atoi64(b)
	if !ok && len(b) > 2 && b[0] == '0' && b[1] == 'x' {
		return 0, nil, true // 64-bit addresses (mmap)
	}
	return v, nil, ok
}

// fdAnnot parses "3", "3</path>" or "AT_FDCWD</cwd>".
func fdAnnot(a []byte) (int, []byte, bool) {
	var path []byte
	if i := bytes.IndexByte(a, '<'); i >= 0 && len(a) > i+1 && a[len(a)-1] == '>' {
		path = cutAnnot(a[i+1 : len(a)-1])
		a = a[:i]
	}
	if bytes.Equal(a, []byte("AT_FDCWD")) {
		return -100, path, true
	}
	v, ok := atoi(a)
	return v, path, ok
}

var errnoNames = map[string]string{}

func errName(e []byte) string {
	if len(e) == 0 || e[0] != 'E' {
		return ""
	}
	if s, ok := errnoNames[string(e)]; ok {
		return s
	}
	if len(errnoNames) > 512 {
		return string(e)
	}
	s := string(e)
	errnoNames[s] = s
	return s
}

// splitArgs splits the arguments after "name(" at top-level commas up to
// the matching ')'. It returns the trimmed arguments and the index just
// after ')'. Quoted strings, nested (), [], {} and fd annotations <...>
// are skipped.
func splitArgs(s []byte, out [][]byte) ([][]byte, int, bool) {
	depth := 0
	start := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"':
			i++
			for i < len(s) && s[i] != '"' {
				if s[i] == '\\' {
					i++
				}
				i++
			}
			if i >= len(s) {
				return out, 0, false
			}
		case '<':
			// fd annotation: ends at '>' followed by a delimiter
			j := i + 1
			for j < len(s) {
				if s[j] == '>' && (j+1 == len(s) || s[j+1] == ',' || s[j+1] == ')' || s[j+1] == ' ' || s[j+1] == ']' || s[j+1] == '}') {
					break
				}
				j++
			}
			if j >= len(s) {
				return out, 0, false
			}
			i = j
		case '(', '[', '{':
			depth++
		case ']', '}':
			if depth > 0 {
				depth--
			}
		case ')':
			if depth > 0 {
				depth--
				continue
			}
			if a := bytes.TrimSpace(s[start:i]); len(a) > 0 || len(out) > 0 {
				out = append(out, a)
			}
			return out, i + 1, true
		case ',':
			if depth == 0 {
				out = append(out, bytes.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	return out, 0, false
}

// iovLen sums the iov_len fields of an iovec array argument.
func iovLen(a []byte) int64 {
	var n int64
	found := false
	for {
		i := bytes.Index(a, []byte("iov_len="))
		if i < 0 {
			break
		}
		a = a[i+8:]
		j := 0
		for j < len(a) && isDigit(a[j]) {
			j++
		}
		v, ok := atoi64(a[:j])
		if ok {
			n += v
			found = true
		}
		a = a[j:]
	}
	if !found {
		return -1
	}
	return n
}

// unquote decodes a strace string argument "…" (dropping a trailing "..."
// truncation mark); it returns raw bytes for anything else.
func unquote(a []byte, buf *[]byte) []byte {
	if len(a) < 2 || a[0] != '"' {
		return a
	}
	end := bytes.LastIndexByte(a, '"')
	if end <= 0 {
		return a
	}
	a = a[1:end]
	if bytes.IndexByte(a, '\\') < 0 {
		return a
	}
	out := (*buf)[:0]
	for i := 0; i < len(a); i++ {
		c := a[i]
		if c != '\\' || i+1 >= len(a) {
			out = append(out, c)
			continue
		}
		i++
		switch a[i] {
		case 'n':
			out = append(out, '\n')
		case 't':
			out = append(out, '\t')
		case 'r':
			out = append(out, '\r')
		case 'x':
			if i+2 < len(a) {
				if v, err := strconv.ParseUint(string(a[i+1:i+3]), 16, 8); err == nil {
					out = append(out, byte(v))
					i += 2
					continue
				}
			}
			out = append(out, 'x')
		default:
			if a[i] >= '0' && a[i] <= '7' {
				v, j := 0, i
				for j < len(a) && j < i+3 && a[j] >= '0' && a[j] <= '7' {
					v = v*8 + int(a[j]-'0')
					j++
				}
				out = append(out, byte(v))
				i = j - 1
				continue
			}
			out = append(out, a[i])
		}
	}
	*buf = out
	return out
}

// cutAnnot drops the device part of -yy annotations ("/dev/null<char 1:3>").
func cutAnnot(p []byte) []byte {
	if i := bytes.IndexByte(p, '<'); i > 0 && p[0] == '/' {
		return p[:i]
	}
	return p
}
