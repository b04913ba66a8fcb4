package parquet

import (
	"encoding/binary"
	"math/bits"
)

// appendHybrid appends the RLE / bit-packing hybrid encoding of vals
// (each below 1<<width) to dst, without a length prefix: runs of eight or
// more equal values as RLE runs, the rest bit-packed in groups of eight
// (the last group padded with zeros, which the reader ignores since the
// page says how many values it holds). The definition levels of a version
// 2 data page and the dictionary indices of its values are encoded so.
func appendHybrid[T uint8 | uint32](dst []byte, vals []T, width int) []byte {
	n := len(vals)
	for i := 0; i < n; {
		if r := runLen(vals, i); r >= 8 {
			dst = binary.AppendUvarint(dst, uint64(r)<<1)
			v := uint32(vals[i])
			for k := 0; k < width; k += 8 {
				dst = append(dst, byte(v>>k))
			}
			i += r
			continue
		}
		// A literal run, by groups of eight, until a group starts a run
		// of eight or more.
		end := i
		for {
			end += 8
			if end >= n {
				end = n
				break
			}
			if hasRun8(vals, end) {
				break
			}
		}
		groups := (end - i + 7) / 8
		dst = binary.AppendUvarint(dst, uint64(groups)<<1|1)
		dst = bitPack(dst, vals[i:end], width, groups)
		i = end
	}
	return dst
}

// runLen is the number of values equal to vals[i] from i on.
func runLen[T uint8 | uint32](vals []T, i int) int {
	v, j := vals[i], i+1
	if b, ok := any(vals).([]uint8); ok {
		// Definition levels: long runs, eight at a time.
		w := uint64(v) * 0x0101010101010101
		for j+8 <= len(b) && binary.LittleEndian.Uint64(b[j:]) == w {
			j += 8
		}
	}
	for j < len(vals) && vals[j] == v {
		j++
	}
	return j - i
}

// hasRun8 says whether vals[i:i+8] are eight equal values.
func hasRun8[T uint8 | uint32](vals []T, i int) bool {
	if i+8 > len(vals) {
		return false
	}
	v := vals[i]
	for _, x := range vals[i+1 : i+8] {
		if x != v {
			return false
		}
	}
	return true
}

// bitPack appends groups groups of eight values of width bits, least
// significant bit first; values past len(vals) are zeros.
func bitPack[T uint8 | uint32](dst []byte, vals []T, width, groups int) []byte {
	full := min(groups, len(vals)/8)
	if width <= 8 {
		// Eight values in a word.
		w := uint(width)
		for g := range full {
			v := vals[g*8 : g*8+8 : g*8+8]
			x := uint64(v[0]) | uint64(v[1])<<w | uint64(v[2])<<(2*w) | uint64(v[3])<<(3*w) |
				uint64(v[4])<<(4*w) | uint64(v[5])<<(5*w) | uint64(v[6])<<(6*w) | uint64(v[7])<<(7*w)
			dst = binary.LittleEndian.AppendUint64(dst, x)
			dst = dst[:len(dst)-8+width]
		}
	} else {
		dst = bitPackWide(dst, vals[:full*8], width)
	}
	if full < groups {
		var tail [8]T
		copy(tail[:], vals[full*8:])
		return bitPack(dst, tail[:], width, 1)
	}
	return dst
}

// bitPackWide bit-packs vals (a multiple of eight values) of more than
// eight bits each.
func bitPackWide[T uint8 | uint32](dst []byte, vals []T, width int) []byte {
	var acc uint64
	nbits := uint(0)
	for _, x := range vals {
		acc |= uint64(x) << nbits
		nbits += uint(width)
		if nbits >= 32 {
			dst = binary.LittleEndian.AppendUint32(dst, uint32(acc))
			acc >>= 32
			nbits -= 32
		}
	}
	for ; nbits > 0; nbits -= 8 {
		dst = append(dst, byte(acc))
		acc >>= 8
	}
	return dst
}

// bitWidth is the width of the dictionary indices of a dictionary of n
// entries (at least 1).
func bitWidth(n int) int {
	if n <= 2 {
		return 1
	}
	return bits.Len32(uint32(n - 1))
}
