package paje

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"unicode/utf8"
)

// A chunk is tokenized from a bitmap of its special bytes (markSpecials):
// one pass over the chunk's bytes, 64 at a time with AVX2 and eight
// otherwise, then a walk over the set bits, line after line. tokenize,
// which the line-at-a-time readers use, finds the same bytes block by
// block within each line, which costs a loop per line and a byte-by-byte
// last block; on the StarPU trace the bitmap takes a quarter of the
// tokenizing side's instructions off (2.765 → 2.500 billion in all).
//
// tokenizeBits writes out its three walks over the bits (fields, a quoted
// field, a comment) rather than calling an iterator: with one, the run
// took 0.6% more instructions.

// markSpecials sets bit k%64 of word k/64 of dst for every byte data[k]
// below 0x24 (whitespace, newlines, control characters, '!', '"', '#'),
// DEL and non-ASCII (the bytes tokenize looks at); the bits past the end
// of data are clear.
func markSpecials(dst []uint64, data []byte) []uint64 {
	nw := (len(data) + 63) / 64
	if cap(dst) < nw {
		dst = make([]uint64, nw, nw+nw/4)
	}
	dst = dst[:nw]
	full := len(data) / 64
	markWords(dst[:full], data[:full*64])
	if rest := data[full*64:]; len(rest) > 0 {
		// The last bytes, followed by '0's (ordinary bytes).
		var tail [64]byte
		copy(tail[copy(tail[:], rest):], "0000000000000000000000000000000000000000000000000000000000000000")
		markWordsGo(dst[full:], tail[:])
	}
	return dst
}

// markWordsGo is markWords, eight bytes at a time.
func markWordsGo(dst []uint64, data []byte) {
	for w := range dst {
		b := data[w*64 : w*64+64]
		dst[w] = gather(binary.LittleEndian.Uint64(b)) |
			gather(binary.LittleEndian.Uint64(b[8:]))<<8 |
			gather(binary.LittleEndian.Uint64(b[16:]))<<16 |
			gather(binary.LittleEndian.Uint64(b[24:]))<<24 |
			gather(binary.LittleEndian.Uint64(b[32:]))<<32 |
			gather(binary.LittleEndian.Uint64(b[40:]))<<40 |
			gather(binary.LittleEndian.Uint64(b[48:]))<<48 |
			gather(binary.LittleEndian.Uint64(b[56:]))<<56
	}
}

// gather is the specials of eight bytes as eight bits, the first byte's
// lowest: the flags (bit 7 of each byte) moved down to bit 8i, then
// multiplied into the top byte (the partial products land on distinct
// bits, so nothing carries into it).
func gather(v uint64) uint64 {
	const low7 = 0x7f * ones
	// Each byte on its own: its low seven bits plus 0x5c never carry
	// out of it.
	ge24 := v&low7 + (0x80-0x24)*ones // bit 7: low seven bits ≥ 0x24
	y := v ^ low7
	notDEL := (y&low7 + low7) | y
	s := (^ge24 | v | ^notDEL) & highs
	return (s >> 7) * 0x0102040810204080 >> 56
}

// tokenizeBits tokenizes the line of data that starts at ls, as tokenize
// does the line alone (without its newline and a carriage return before
// it), walking the set bits of the chunk's bitmap: it returns its tokens,
// stored in dst[:0], the tokenizer's complaint, if any, and where the
// line ends (its newline, or the end of data). It does not grow dst: when
// the line has more tokens than dst has room for, the reason is
// reasonFull and the caller calls again with more. (With append's call
// to grow the slice in the loop, the loop's variables were saved to the
// stack at every token, five stores, for a call that never happened. The
// five stores are written out: an inlined helper returning the slice and
// a flag made the function 65 M instructions longer on the 41 MB trace.)
func tokenizeBits(data []byte, bm []uint64, ls int, dst []token) (toks []token, reason string, end int) {
	dst = dst[:0]
	n := len(data)
	high := false
	field := ls // where the next field may start
	w := ls >> 6
	m := bm[w] &^ (1<<(uint(ls)&63) - 1)
	for {
		for m == 0 {
			if w++; w >= len(bm) {
				end = n
				goto eol
			}
			m = bm[w]
		}
		j := w<<6 | bits.TrailingZeros64(m)
		m &= m - 1
		c := data[j]
		if c == '\t' || c == ' ' { // most of them: the separators
			if j > field {
				n := len(dst)
				if n == cap(dst) {
					return dst, reasonFull, 0
				}
				dst = dst[:n+1]
				dst[n] = token{b: data[field:j:j]}
			}
			field = j + 1
			continue
		}
		switch byteClass[c] {
		case cWord:
			continue // '!', or a byte flagged only because one below is
		case cSpace:
			if c == '\n' {
				end = j
				goto eol
			}
			if j > field {
				n := len(dst)
				if n == cap(dst) {
					return dst, reasonFull, 0
				}
				dst = dst[:n+1]
				dst[n] = token{b: data[field:j:j]}
			}
			field = j + 1
		case cQuote:
			if j != field {
				continue // inside a word: part of it
			}
			// The field runs to the next quote on the line.
			for {
				for m == 0 {
					if w++; w >= len(bm) {
						return dst, "unterminated quoted string", n
					}
					m = bm[w]
				}
				k := w<<6 | bits.TrailingZeros64(m)
				m &= m - 1
				switch q := data[k]; {
				case q == '"':
					n := len(dst)
					if n == cap(dst) {
						return dst, reasonFull, 0
					}
					dst = dst[:n+1]
					dst[n] = token{b: data[j+1 : k : k+1]} // quoted: room for the closing quote
					field = k + 1
				case q == '\n':
					return dst, "unterminated quoted string", k
				case q >= 0x80:
					high = true
					continue
				case byteClass[q] == cCtrl:
					return dst, binaryReason(data[ls:], k-ls), lineEnd(data, k)
				default:
					continue
				}
				break
			}
		case cHash:
			if j > field {
				n := len(dst)
				if n == cap(dst) {
					return dst, reasonFull, 0
				}
				dst = dst[:n+1]
				dst[n] = token{b: data[field:j:j]}
			}
			// The rest is a comment, still checked for binary data.
			field = n + 1 // no field after it
			for {
				for m == 0 {
					if w++; w >= len(bm) {
						end = n
						goto eol
					}
					m = bm[w]
				}
				k := w<<6 | bits.TrailingZeros64(m)
				m &= m - 1
				switch q := data[k]; {
				case q == '\n':
					end = k
					goto eol
				case q >= 0x80:
					high = true
				case byteClass[q] == cCtrl:
					return dst, binaryReason(data[ls:], k-ls), lineEnd(data, k)
				}
			}
		case cCtrl:
			return dst, binaryReason(data[ls:], j-ls), lineEnd(data, j)
		case cHigh:
			high = true
		}
	}
eol:
	// A carriage return before the newline is a separator like the
	// others: no field holds it.
	if end > field {
		n := len(dst)
		if n == cap(dst) {
			return dst, reasonFull, 0
		}
		dst = dst[:n+1]
		dst[n] = token{b: data[field:end:end]}
	}
	if high && !utf8.Valid(data[ls:end]) {
		return dst, "binary data (invalid UTF-8)", end
	}
	return dst, "", end
}

// reasonFull is tokenizeBits' reason when dst has no room for a token.
const reasonFull = "no room for the line's tokens"

// lineEnd is the end of the line holding data[i]: its newline, or the end
// of data.
func lineEnd(data []byte, i int) int {
	if k := bytes.IndexByte(data[i:], '\n'); k >= 0 {
		return i + k
	}
	return len(data)
}
